package config

import (
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// DefaultLockFile is the lock's name when the config does not give one: the
// Python preflight's name, so an existing lock keeps working.
const DefaultLockFile = "mcp-tools.lock.json"

// DefaultCallSchedule is how often canary calls run when nothing says: a
// call may cost money or count against a rate limit, so rarely.
const DefaultCallSchedule = "@every 5m"

// BuiltinDefaults are the defaults when mcpwatch.yml sets none.
func BuiltinDefaults() Defaults {
	return Defaults{
		Timeout: 10 * time.Second,
		// A cold npx -y install of a typical MCP server takes 30-60 s, and
		// more on a loaded host; two minutes lets it finish.
		StartTimeout: DefaultStartTimeout,
		Schedule:     "@every 30s",
		// A remote probe waits on the network for nearly all its time, so
		// the pool is sized for probes that wait, not for the CPU: a fleet
		// needs (probes a second) x (seconds a probe takes) slots, and
		// slow servers or a loaded host multiply the second factor; a
		// probe that waits for a slot until its next firing is skipped
		// (mcpwatch_probes_skipped_total{reason="still_queued"}). stdio
		// probes keep their own, lower bound below.
		Concurrency: 128,
		// A stdio probe is a process start: some MB and some ms of CPU. 8
		// probes a typical agent's servers (a client config lists a handful)
		// all at once, so a preflight takes the time of the slowest, while
		// a fleet of stdio servers still cannot fork-bomb the host.
		StdioConcurrency: 8,
		Era:              probe.EraAuto,
		MaxMessageBytes:  4 << 20,
		CallSchedule:     DefaultCallSchedule,
		// A credential revoked now is named within 15 minutes, and a
		// service asked four times an hour by one client notices nothing.
		IssuerInterval: 15 * time.Minute,
	}
}

// Normalize applies the defaults, in this one place: what the
// configuration's defaults leave unset takes the built-in default, and
// what a server leaves unset takes the configuration's default. Load and
// Source.Load call it, so every command, the daemon and its reloads see
// each value set; a configuration built in code calls it before use.
// Normalizing twice changes nothing.
func (c *Config) Normalize() {
	c.Defaults = c.Defaults.normalized()
	for i := range c.Servers {
		c.Servers[i] = c.Servers[i].Normalized(c.Defaults)
	}
	for i := range c.Ignored {
		c.Ignored[i] = c.Ignored[i].Normalized(c.Defaults)
	}
}

// normalized is d with the built-in default for every value it leaves
// unset. CallTimeout stays 0 when unset: each server's own timeout.
func (d Defaults) normalized() Defaults {
	b := BuiltinDefaults()
	set(&d.Timeout, b.Timeout)
	set(&d.StartTimeout, b.StartTimeout)
	set(&d.Schedule, b.Schedule)
	set(&d.Concurrency, b.Concurrency)
	set(&d.StdioConcurrency, b.StdioConcurrency)
	set(&d.Era, b.Era)
	set(&d.MaxMessageBytes, b.MaxMessageBytes)
	set(&d.CallSchedule, b.CallSchedule)
	set(&d.IssuerInterval, b.IssuerInterval)
	return d
}

// Normalized is s with def (normalized) for every value s leaves unset.
// Its transport is stdio for a command, auto for a URL that names none.
func (s Server) Normalized(def Defaults) Server {
	def = def.normalized()
	set(&s.Timeout, def.Timeout)
	set(&s.StartTimeout, def.StartTimeout)
	set(&s.Schedule, def.Schedule)
	set(&s.Era, def.Era)
	set(&s.CallSchedule, def.CallSchedule)
	set(&s.CallTimeout, def.CallTimeout)
	set(&s.CallTimeout, s.Timeout)
	switch {
	case s.Command != "":
		s.Transport = probe.TransportStdio
	case s.URL != "":
		set(&s.Transport, probe.TransportAuto)
	}
	if !s.autoCallsSet {
		s.AutoCalls = def.AutoCalls
	}
	if !s.issuerCheckSet {
		s.NoIssuerCheck = def.NoIssuerCheck
	}
	if !s.inheritEnvSet {
		s.InheritEnv = s.InheritEnv || def.InheritEnv && s.Command != ""
	}
	return s
}

// DefaultStartTimeout is defaults.start_timeout when the configuration
// sets none.
const DefaultStartTimeout = 120 * time.Second

// set gives *v the value def when *v is the zero value.
func set[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

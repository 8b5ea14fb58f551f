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
		// A probe of a stdio server kept running is a tools/list on it,
		// 2-3 ms of CPU, where a start costs 0.5-2 s (RestartAfter).
		StdioMode: StdioLive,
		// Measured, an npx server kept running holds 46-85 MB of its own
		// (PSS; 130 MB resident in three processes, shared pages counted
		// in each): 64 of them 3-5 GB. A server past the cap starts
		// for each probe, which costs far more CPU: 40 npx servers with
		// 16 live cost 94% of a core and most fresh starts timed out on a
		// busy host, all 40 live 4.3% (docs/performance.md).
		LiveSessions: 64,
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
	set(&d.StdioMode, b.StdioMode)
	set(&d.LiveSessions, b.LiveSessions)
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
		set(&s.StdioMode, def.StdioMode)
		set(&s.RestartEvery, def.RestartEvery) // zero: RestartAfter's default
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

// RestartAfter is how long serve keeps a live stdio server running before
// it starts it afresh: restart_every when set, else fifteen times
// interval, the time between the server's probes (DefaultRestartEvery
// for a schedule without one, a cron expression). Measured, a start costs
// 0.5-1.9 s of CPU through npx where a probe of the running server costs
// 2-3 ms (docs/performance.md): with a start every tenth probe, four npx
// servers cost 0.59% of a core each on a busy machine, over the 0.5% a
// live session is for; every fifteenth, about 0.44%. A server that would
// no longer start (a revoked key it exits on) is seen within fifteen
// probes, 7.5 minutes at the default schedule.
func (s Server) RestartAfter(interval time.Duration) time.Duration {
	switch {
	case s.RestartEvery > 0:
		return s.RestartEvery
	case interval > 0:
		return restartProbes * interval
	}
	return DefaultRestartEvery
}

// restartProbes is how many probes a live server serves, by default,
// before it is started afresh.
const restartProbes = 15

// DefaultRestartEvery is RestartAfter for a schedule without a fixed
// interval.
const DefaultRestartEvery = 10 * time.Minute

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

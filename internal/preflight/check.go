package preflight

import (
	"context"
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// Input is what a check compares: the configured servers and the lock.
type Input struct {
	Config       *config.Config
	ConfigSource string // the file the servers were read from, for messages
	Lock         *lockstore.Lock
	LockPath     string
	// Servers selects servers by name; empty means every server of the
	// configuration and of the lock. The caller rejects names found in
	// neither.
	Servers []string
	// Skip names servers not to probe or judge (--skip, and the
	// configuration's ignore:): configured or locked, they are listed in
	// the report as skipped and fail nothing.
	Skip []string
}

// Check probes the selected servers once and compares each with its lock
// entry. A server in the lock but not in the configuration fails without a
// probe: the agent would not get its tools either.
func Check(ctx context.Context, in Input, opts Options) *Report {
	started := time.Now()
	r := &Report{
		Kind: ReportKind, Version: opts.Version, Started: started, Strict: opts.Strict,
		Config: in.ConfigSource, Lock: in.LockPath, Servers: []ServerReport{},
	}

	selected := func(name string) bool {
		return (len(in.Servers) == 0 || slices.Contains(in.Servers, name)) && !slices.Contains(in.Skip, name)
	}
	var servers []config.Server
	configured := map[string]bool{}
	for _, s := range in.Config.Servers {
		configured[s.Name] = true
		if selected(s.Name) {
			servers = append(servers, s)
		}
	}

	// What the files alone decide, judged once, for the servers probed
	// (added to what their probe shows) and those not configured.
	static := map[string]ServerReport{}
	for _, sr := range Static(in, opts.Strict) {
		static[sr.Name] = sr
	}
	opts.calls = true
	for _, obs := range Observe(ctx, servers, opts) {
		entry, locked := in.Lock.Entry(obs.Server.Name)
		r.Servers = append(r.Servers, judge(obs, entry, locked, opts.Strict, static[obs.Server.Name].Problems))
	}
	for _, name := range in.Skip {
		if (len(in.Servers) == 0 || slices.Contains(in.Servers, name)) && !slices.Contains(r.Skipped, name) {
			r.Skipped = append(r.Skipped, name)
		}
	}
	slices.Sort(r.Skipped)
	for _, sr := range static {
		if !configured[sr.Name] {
			r.Servers = append(r.Servers, sr)
		}
	}
	slices.SortFunc(r.Servers, func(a, b ServerReport) int { return compareNames(a.Name, b.Name) })

	r.OK = true
	r.Totals.Servers = len(r.Servers)
	for _, s := range r.Servers {
		if s.Failed {
			r.OK = false
			r.Totals.Failed++
		}
		r.Totals.ToolsLocked += len(s.Diff.Expected)
		if s.Probe != nil && s.Probe.OK {
			r.Totals.ToolsVerified += len(s.Diff.Expected) - len(s.Diff.Missing)
			r.Totals.ToolsSeen += len(s.Probe.Tools)
		}
		for _, c := range s.Calls {
			r.Totals.Calls++
			if !c.Passed {
				r.Totals.CallsFailed++
			}
		}
	}
	r.Duration = jsondoc.Seconds(time.Since(started))
	return r
}

// Failed returns a report for a run that could not start: the
// configuration or the lock is unusable. err's message must hold no secret
// (config and lockstore errors name files and keys, never values).
func Failed(err error, configSource, lockPath, version string, started time.Time) *Report {
	return &Report{
		Kind: ReportKind, Version: version, Started: started,
		Duration: jsondoc.Seconds(time.Since(started)),
		Config:   configSource, Lock: lockPath, Error: err.Error(), Servers: []ServerReport{},
	}
}

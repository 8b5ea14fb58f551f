package preflight

import (
	"context"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Options shape a run. Zero values take the defaults.
type Options struct {
	// Timeout, when positive, replaces every server's own deadline.
	Timeout time.Duration
	// Concurrency bounds the probes at once (zero: no bound, every server
	// at once; the commands pass the configuration's, which config.Load
	// always sets); StdioConcurrency bounds the stdio processes among them
	// (default Concurrency).
	Concurrency      int
	StdioConcurrency int
	// Strict also fails extra tools, changed fingerprints and servers
	// without a lock entry.
	Strict bool
	// Probe bounds each probe (message size, pages, stderr tail).
	Probe probe.Options
	// Lookup reads a variable for ${VAR} expansion; os.LookupEnv fits.
	Lookup func(string) (string, bool)
	// Version is mcpwatch's version, recorded in the report.
	Version string
	// Eras, when set, gives each probe its era hint (the era the server
	// answered in last time) and learns the era each probe found.
	Eras EraMemory
	// AutoCalls, when positive, samples each server's read-only tools
	// that need no input, at most AutoCalls of them (runner.Request's
	// AutoCalls): mcpwatch init learns the shape of their answers so.
	AutoCalls int
	// NoIssuerCheck leaves the services that issued the servers'
	// credentials unasked, whatever the configuration says (--no-issuer-check).
	NoIssuerCheck bool
	// calls makes each server's contracted canary calls, with their
	// retry policies (check does; lock never calls a tool).
	calls bool
}

// EraMemory remembers servers' eras between runs (see package eracache).
// It must be safe for concurrent use.
type EraMemory interface {
	Hint(s config.Server) probe.Era
	Learn(s config.Server, res *probe.Result)
}

// Observation is one server probed once: its Result and its Tools are
// scrubbed of the server's secret values, fit to print, compare with the
// lock and lock; the tools' fingerprints were computed within the probe's
// deadline (see runner.Observation).
type Observation struct {
	Server config.Server
	runner.Observation
}

// Observe probes every server once, in parallel within the bounds of opts,
// each within its own deadline (which starts when its probe starts, not
// while it waits for a slot). It returns when every probe has ended, with
// one Observation per server in the order given.
func Observe(ctx context.Context, servers []config.Server, opts Options) []Observation {
	all := max(len(servers), 1)
	if opts.Concurrency > 0 {
		all = min(all, opts.Concurrency)
	}
	stdio := opts.StdioConcurrency
	if stdio <= 0 {
		stdio = all
	}
	pool := runner.NewPool(all, stdio)
	// Fingerprinted within each probe's deadline: a hostile schema cannot
	// make the comparison that follows outlast it.
	req := runner.Request{Timeout: opts.Timeout, Options: opts.Probe, Lookup: opts.Lookup, Fingerprint: true,
		Calls: opts.calls, Retries: opts.calls, AutoCalls: opts.AutoCalls}
	if !opts.NoIssuerCheck {
		// One check a credential for the whole run, however many servers
		// are given it.
		req.Issuer = issuer.NewChecker(nil, 0, opts.Version)
	}

	out := make([]Observation, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := req
			if opts.Eras != nil {
				req.Era = opts.Eras.Hint(s)
			}
			out[i] = Observation{Server: s, Observation: runner.Probe(ctx, pool, s, req)}
			if opts.Eras != nil && ctx.Err() == nil {
				opts.Eras.Learn(s, out[i].Result)
			}
		}()
	}
	wg.Wait()
	return out
}

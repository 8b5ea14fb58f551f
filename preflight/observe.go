package preflight

import (
	"context"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// DefaultTimeout is a probe's deadline when neither the options nor the
// server give one.
const DefaultTimeout = 10 * time.Second

// Options shape a run. Zero values take the defaults.
type Options struct {
	// Timeout, when positive, replaces every server's own deadline.
	Timeout time.Duration
	// Concurrency bounds the probes at once (default 16); StdioConcurrency
	// bounds the stdio processes among them (default Concurrency).
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
}

// Observation is one server probed once.
type Observation struct {
	Server  config.Server
	Timeout time.Duration
	// Result is what the probe saw, scrubbed of the server's secret
	// values: fit to print. A target that could not be built (an unset
	// variable) is a Result with probe.ReasonConfig.
	Result *probe.Result
	// Tools are the tools as observed, unscrubbed, for comparing with the
	// lock and building lock entries.
	Tools []lockstore.Observed
}

// Observe probes every server once, in parallel within the bounds of opts,
// each within its own deadline (which starts when its probe starts, not
// while it waits for a slot). It returns when every probe has ended, with
// one Observation per server in the order given.
func Observe(ctx context.Context, servers []config.Server, opts Options) []Observation {
	all := opts.Concurrency
	if all <= 0 {
		all = 16
	}
	all = min(all, max(len(servers), 1))
	stdio := opts.StdioConcurrency
	if stdio <= 0 {
		stdio = all
	}
	p := newPool(all, stdio)

	out := make([]Observation, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = observe(ctx, p, s, opts)
		}()
	}
	wg.Wait()
	return out
}

// observe probes one server when a slot is free.
func observe(ctx context.Context, p *pool, s config.Server, opts Options) Observation {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = s.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	obs := Observation{Server: s, Timeout: timeout}

	lookup := opts.Lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	target, err := s.Target(lookup)
	if err != nil {
		// The error names the server and the key, never the value.
		obs.Result = &probe.Result{
			Reason: probe.ReasonConfig, Error: err.Error(), Transport: s.Transport,
			Tools: []probe.Tool{}, Started: time.Now(),
		}
		return obs
	}

	release, err := p.acquire(ctx, target.Command != "")
	if err != nil {
		obs.Result = &probe.Result{
			Reason: probe.ReasonCanceled, Error: "canceled before the probe started",
			Transport: target.Transport, Tools: []probe.Tool{}, Started: time.Now(),
		}
		return obs
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	res := probe.Run(pctx, target, opts.Probe)
	cancel()
	release()

	obs.Tools = make([]lockstore.Observed, len(res.Tools))
	for i, t := range res.Tools {
		obs.Tools[i] = lockstore.Observed{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	obs.Result = newScrubber(target).result(res)
	return obs
}

// pool bounds the probes at once, and the stdio processes among them.
type pool struct {
	all, stdio chan struct{}
}

func newPool(all, stdio int) *pool {
	all = max(all, 1)
	stdio = min(max(stdio, 1), all)
	return &pool{all: make(chan struct{}, all), stdio: make(chan struct{}, stdio)}
}

// acquire waits for a slot. A stdio probe takes its stdio slot first, so
// while it waits it holds no slot an HTTP probe could use.
func (p *pool) acquire(ctx context.Context, stdio bool) (release func(), err error) {
	if stdio {
		select {
		case p.stdio <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case p.all <- struct{}{}:
	case <-ctx.Done():
		if stdio {
			<-p.stdio
		}
		return nil, ctx.Err()
	}
	return func() {
		<-p.all
		if stdio {
			<-p.stdio
		}
	}, nil
}

package preflight_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// Stalled servers each hold their slot for the whole timeout, which makes
// the bounds visible in the wall time: lower bounds cannot flake (timers
// never fire early), and the upper bound is what one-by-one probing would
// take at the least (n timeouts): below it with several timeouts to spare
// for a loaded machine.
func TestObserveBounds(t *testing.T) {
	const n, timeout = 4, 2 * time.Second
	servers := map[string]map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("stalled-%d", i)] = testServer(probetest.Config{Behavior: probetest.StallToolsList}, nil)
	}
	cfg := loadConfig(t, servers)

	cases := []struct {
		name                 string
		all, stdio, minWaves int
		maxDur               time.Duration
	}{
		{name: "all at once", all: 16, stdio: 16, minWaves: 1, maxDur: n * timeout},
		{name: "stdio bound", all: 16, stdio: 2, minWaves: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			obs := preflight.Observe(t.Context(), cfg.Servers, preflight.Options{
				Timeout: timeout, Concurrency: tc.all, StdioConcurrency: tc.stdio,
			})
			took := time.Since(start)
			for i, o := range obs {
				if o.Result.Reason != probe.ReasonTimeout || o.Server.Name != cfg.Servers[i].Name {
					t.Errorf("%s: reason %q, want timeout", o.Server.Name, o.Result.Reason)
				}
			}
			if took < time.Duration(tc.minWaves)*timeout {
				t.Errorf("took %s, want at least %d waves of %s: the bound was not kept", took, tc.minWaves, timeout)
			}
			if tc.maxDur > 0 && took >= tc.maxDur {
				t.Errorf("took %s, want under %s: the probes did not run in parallel", took, tc.maxDur)
			}
			t.Logf("%d stalled servers, bounds %d/%d: %s", n, tc.all, tc.stdio, took.Round(time.Millisecond))
		})
	}
}

// HTTP probes are bound by the overall limit only. As above: at least the
// waves the bound makes (lower bounds cannot flake), and fewer than the n
// waves of a stdio bound of 1 wrongly applied to HTTP.
func TestObserveOverallBoundHTTP(t *testing.T) {
	const n, timeout = 4, 2 * time.Second
	servers := map[string]map[string]any{}
	for i := range n {
		srv := probetest.NewServer(probetest.Config{Behavior: probetest.StallToolsList})
		ts := httptest.NewServer(srv)
		t.Cleanup(func() { srv.Close(); ts.Close() })
		servers[fmt.Sprintf("stalled-%d", i)] = map[string]any{"url": ts.URL, "transport": "http"}
	}
	cfg := loadConfig(t, servers)
	for _, tc := range []struct {
		all, stdio, minWaves int
	}{{all: 2, stdio: 1, minWaves: 2}, {all: n, stdio: 1, minWaves: 1}} {
		start := time.Now()
		obs := preflight.Observe(t.Context(), cfg.Servers, preflight.Options{Timeout: timeout, Concurrency: tc.all, StdioConcurrency: tc.stdio})
		took := time.Since(start)
		for _, o := range obs {
			if o.Result.Reason != probe.ReasonTimeout {
				t.Errorf("%s: reason %q (%s), want timeout", o.Server.Name, o.Result.Reason, o.Result.Error)
			}
		}
		if took < time.Duration(tc.minWaves)*timeout || took >= n*timeout {
			t.Errorf("bounds %d/%d: took %s, want %d waves of %s", tc.all, tc.stdio, took, tc.minWaves, timeout)
		}
		t.Logf("%d stalled HTTP servers, bounds %d/%d: %s", n, tc.all, tc.stdio, took.Round(time.Millisecond))
	}
}

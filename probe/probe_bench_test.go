package probe_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// Benchmarks of one whole probe through Run, as the daemon makes it: a new
// client, the handshake of the era, tools/list, and everything closed again.
// The server runs in the same process (HTTP) or is the re-executed test
// binary (stdio), so ns/op is the cost of both sides; allocs/op and B/op
// include the in-process server's.

// BenchmarkRunHTTP probes a streamable HTTP server over loopback TCP.
// "remembered" runs follow an era hint, as the daemon does from the second
// probe of a server on; "auto" runs detect it, as a first probe does.
// "pooled" runs keep connections alive between probes, as the daemon does.
func BenchmarkRunHTTP(b *testing.B) {
	cases := []struct {
		name      string
		serverEra probetest.Era
		hint      probe.Era
		sse       bool // answer with text/event-stream
		pooled    bool
	}{
		{"modern/remembered", probetest.EraModern, probe.EraModern, false, false},
		{"modern/remembered/pooled", probetest.EraModern, probe.EraModern, false, true},
		{"modern/auto", probetest.EraModern, probe.EraAuto, false, false},
		{"legacy/remembered", probetest.EraLegacy, probe.EraLegacy, false, false},
		{"legacy/remembered/pooled", probetest.EraLegacy, probe.EraLegacy, false, true},
		{"legacy/auto", probetest.EraLegacy, probe.EraAuto, false, false},
		{"legacy/remembered/sse-responses", probetest.EraLegacy, probe.EraLegacy, true, false},
		{"legacy/remembered/sse-responses/pooled", probetest.EraLegacy, probe.EraLegacy, true, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			kit := probetest.NewServer(probetest.Config{Era: c.serverEra, Tools: probetest.Surface(25), SSEResponses: c.sse})
			srv := httptest.NewServer(kit)
			defer srv.Close()
			defer kit.Close()
			var opts probe.Options
			if c.pooled {
				opts.Conns = probe.NewConnPool()
				defer opts.Conns.Close()
			}
			target := probe.Target{URL: srv.URL + "/mcp", Transport: probe.TransportHTTP, EraHint: c.hint}
			benchRun(b, target, 25, opts)
		})
	}
}

// BenchmarkRunStdio probes the re-executed test binary over stdio: the cost
// is dominated by starting and reaping a process.
func BenchmarkRunStdio(b *testing.B) {
	cases := []struct {
		name      string
		serverEra probetest.Era
		era       probe.Era
	}{
		{"modern/remembered", probetest.EraModern, probe.EraModern},
		{"legacy/remembered", probetest.EraLegacy, probe.EraLegacy},
		{"legacy/auto", probetest.EraLegacy, probe.EraAuto},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			path, args, env := probetest.Command(probetest.Config{Era: c.serverEra, Tools: probetest.Surface(25)})
			target := probe.Target{Command: path, Args: args, Env: env, EraHint: c.era}
			benchRun(b, target, 25, probe.Options{})
		})
	}
}

func benchRun(b *testing.B, target probe.Target, wantTools int, opts probe.Options) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res := probe.Run(ctx, target, opts)
		cancel()
		if !res.OK || len(res.Tools) != wantTools {
			b.Fatalf("probe failed: ok=%v reason=%s tools=%d: %s", res.OK, res.Reason, len(res.Tools), res.Error)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
}

package probe_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// countingServer serves cfg over streamable HTTP and counts the TCP
// connections it accepted.
func countingServer(t *testing.T, cfg probetest.Config) (url string, accepted *atomic.Int64) {
	t.Helper()
	kit := probetest.NewServer(cfg)
	srv := httptest.NewUnstartedServer(kit)
	accepted = &atomic.Int64{}
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(kit.Close)
	return srv.URL + "/mcp", accepted
}

// With a pool, ten probes of a server whose era is remembered use one TCP
// connection; without one, each probe opens its own.
func TestConnPoolReusesConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		era  probetest.Era
		hint probe.Era
	}{
		{"modern", probetest.EraModern, probe.EraModern},
		{"legacy", probetest.EraLegacy, probe.EraLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			probeTen := func(pool *probe.ConnPool) int64 {
				url, accepted := countingServer(t, probetest.Config{Era: tc.era})
				for i := range 10 {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					res := probe.Run(ctx, probe.Target{URL: url, EraHint: tc.hint}, probe.Options{Conns: pool})
					cancel()
					if !res.OK || res.Era != tc.hint || len(res.Tools) != 2 {
						t.Fatalf("probe %d: ok %v era %q, %d tools: %s: %s", i, res.OK, res.Era, len(res.Tools), res.Reason, res.Error)
					}
				}
				return accepted.Load()
			}
			pool := probe.NewConnPool()
			defer pool.Close()
			if n := probeTen(pool); n != 1 {
				t.Errorf("10 probes through a pool: %d TCP connections, want 1", n)
			}
			if n := probeTen(nil); n != 10 {
				t.Errorf("10 probes without a pool: %d TCP connections, want 10", n)
			}
		})
	}
}

// Two servers on one origin share the origin's connections, and not their
// credentials: each request carries its own server's headers.
func TestConnPoolKeepsHeadersApart(t *testing.T) {
	t.Parallel()
	url, accepted := countingServer(t, probetest.Config{Era: probetest.EraModern, Behavior: probetest.TokenGated, Token: "right"})
	pool := probe.NewConnPool()
	defer pool.Close()
	for i, tc := range []struct {
		token string
		tools int
	}{{"right", 2}, {"wrong", 0}, {"right", 2}, {"", 0}} {
		target := probe.Target{URL: url, EraHint: probe.EraModern}
		if tc.token != "" {
			target.Headers = bearerHeader(tc.token)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res := probe.Run(ctx, target, probe.Options{Conns: pool})
		cancel()
		if !res.OK || len(res.Tools) != tc.tools {
			t.Errorf("probe %d with token %q: ok %v, %d tools, want %d", i, tc.token, res.OK, len(res.Tools), tc.tools)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d TCP connections, want 1", n)
	}
}

// A remembered era that is no longer the server's is detected afresh in
// the same probe, over HTTP too; a server error says nothing of the era.
func TestHTTPEraHintRedetected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    probetest.Config
		hint   probe.Era
		era    probe.Era
		reason probe.Reason
	}{
		{"modern hint, legacy server", probetest.Config{Era: probetest.EraLegacy}, probe.EraModern, probe.EraLegacy, ""},
		{"legacy hint, modern server", probetest.Config{Era: probetest.EraModern}, probe.EraLegacy, probe.EraModern, ""},
		{"modern hint, server error", probetest.Config{Era: probetest.EraModern, Behavior: probetest.ServerError500}, probe.EraModern, "", probe.ReasonHTTPStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kit, url := kitServer(t, tc.cfg, false)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res := probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP, EraHint: tc.hint}, probe.Options{})
			if res.Reason != tc.reason || (tc.reason == "" && res.Era != tc.era) {
				t.Fatalf("reason %q era %q: %s", res.Reason, res.Era, res.Error)
			}
			discovers := kit.Received("server/discover")
			if want := map[bool]int{true: 1, false: 0}[tc.reason == ""]; discovers != want {
				t.Errorf("%d server/discover requests, want %d", discovers, want)
			}
		})
	}
}

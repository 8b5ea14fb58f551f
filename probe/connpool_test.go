package probe_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
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

// connReturns counts, through an httptrace on a probe's context, the
// connections its requests got and those put back idle. net/http puts a
// connection back from its own goroutine once the body is read, which can
// come after Run has returned: a probe started before then finds no idle
// connection and dials one, as a loaded machine showed. A probe interval
// is far longer than that moment; the test waits for it.
type connReturns struct{ got, put atomic.Int64 }

func (r *connReturns) traced(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:     func(httptrace.GotConnInfo) { r.got.Add(1) },
		PutIdleConn: func(error) { r.put.Add(1) },
	})
}

// waitAllBack waits until every connection got has been put back.
func (r *connReturns) waitAllBack(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); r.put.Load() < r.got.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections put back idle after a minute", r.put.Load(), r.got.Load())
		}
	}
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
				var conns connReturns
				for i := range 10 {
					ctx, cancel := context.WithTimeout(conns.traced(context.Background()), time.Minute)
					res := probe.Run(ctx, probe.Target{URL: url, EraHint: tc.hint}, probe.Options{Conns: pool})
					cancel()
					if !res.OK || res.Era != tc.hint || len(res.Tools) != 2 {
						t.Fatalf("probe %d: ok %v era %q, %d tools: %s: %s", i, res.OK, res.Era, len(res.Tools), res.Reason, res.Error)
					}
					if pool != nil {
						conns.waitAllBack(t)
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

// Probes through a pool (the lean transport) read what a probe without
// one reads: event-stream responses with a server request inside, a stream
// that drops and is resumed or sent again, the legacy SSE transport, a
// list_changed notification; three probes each, every session ended.
func TestConnPoolStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		cfg       probetest.Config
		sse       bool
		transport probe.Transport
	}{
		{"ping first, legacy", probetest.Config{Behavior: probetest.PingFirst}, false, ""},
		{"drop stream, legacy", probetest.Config{Behavior: probetest.DropStream}, false, ""},
		{"drop stream, modern", probetest.Config{Behavior: probetest.DropStream, Era: probetest.EraModern}, false, ""},
		{"list changed", probetest.Config{Behavior: probetest.ListChanged}, false, ""},
		{"legacy SSE transport", probetest.Config{Behavior: probetest.PingFirst}, true, probe.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kit, url := kitServer(t, tc.cfg, tc.sse)
			pool := probe.NewConnPool()
			defer pool.Close()
			for i := range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res := probe.Run(ctx, probe.Target{URL: url, Transport: tc.transport}, probe.Options{Conns: pool})
				cancel()
				if !res.OK || len(res.Tools) != 2 {
					t.Fatalf("probe %d: ok %v, %d tools: %s: %s", i, res.OK, len(res.Tools), res.Reason, res.Error)
				}
			}
			if got := kit.Sessions(); got != 0 {
				t.Errorf("%d legacy sessions left open", got)
			}
		})
	}
}

// A server that refuses every probe (401, 500) keeps its one connection
// too, over plain HTTP (the lean exchange) and over TLS (net/http's
// HTTP/1.1 transport): the refusal's body is read to its end before it is
// closed, where closing it unread closed the connection, and over TLS the
// next probe paid a handshake.
func TestConnPoolReusesConnectionsAfterARefusal(t *testing.T) {
	t.Parallel()
	for _, behavior := range []probetest.Behavior{probetest.Unauthorized401, probetest.ServerError500} {
		for _, secure := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/tls=%v", behavior, secure), func(t *testing.T) {
				t.Parallel()
				kit := probetest.NewServer(probetest.Config{Era: probetest.EraModern, Behavior: behavior})
				t.Cleanup(kit.Close)
				srv := httptest.NewUnstartedServer(kit)
				var accepted atomic.Int64
				srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
					if state == http.StateNew {
						accepted.Add(1)
					}
				}
				target := probe.Target{EraHint: probe.EraModern}
				if secure {
					srv.StartTLS()
					target.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
				} else {
					srv.Start()
				}
				t.Cleanup(srv.Close)
				target.URL = srv.URL + "/mcp"
				pool := probe.NewConnPool()
				defer pool.Close()
				var conns connReturns
				for i := range 10 {
					ctx, cancel := context.WithTimeout(conns.traced(context.Background()), time.Minute)
					res := probe.Run(ctx, target, probe.Options{Conns: pool})
					cancel()
					if res.OK || len(res.Tools) != 0 {
						t.Fatalf("probe %d of a server that refuses: ok %v, %d tools", i, res.OK, len(res.Tools))
					}
					conns.waitAllBack(t)
				}
				if n := accepted.Load(); n != 1 {
					t.Errorf("10 refused probes through a pool: %d connections, want 1", n)
				}
			})
		}
	}
}

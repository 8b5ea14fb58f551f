package daemon

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// gate is an MCP server over streamable HTTP whose tools/list, once armed,
// waits until released: a probe in flight for as long as a test needs.
type gate struct {
	next    http.Handler
	armed   atomic.Bool
	lists   atomic.Int64 // tools/list requests received
	waiting atomic.Int64 // tools/list requests held now
	release chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) (*gate, string) {
	g := &gate{next: probetest.Handler(probetest.Config{}), release: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		g.open()
		srv.Close()
	})
	return g, srv.URL
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/list"`)) {
		g.lists.Add(1)
		if g.armed.Load() {
			g.waiting.Add(1)
			select {
			case <-g.release:
			case <-r.Context().Done():
			}
			g.waiting.Add(-1)
		}
	}
	g.next.ServeHTTP(w, r)
}

type reply struct {
	code  int
	body  string
	retry string
}

// probeAsync sends GET /probe?server=name and delivers the reply.
func (h *harness) probeAsync(ctx context.Context, name string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", h.http.URL+"/probe?server="+name, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- reply{code: -1, body: err.Error()}
			return
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		out <- reply{resp.StatusCode, string(b), resp.Header.Get("Retry-After")}
	}()
	return out
}

func (h *harness) server(name string) *server {
	s, ok := h.d.lookup(name)
	if !ok {
		h.t.Fatalf("no server %s", name)
	}
	return s
}

func gateConfig(t *testing.T, url string, names ...string) string {
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"url": url, "transport": "http", "timeout": "60s"}
	}
	return writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "concurrency": 4},
		"servers":  servers,
	})
}

// Concurrent /probe requests for one server share one probe; one past the
// per-server bound is turned away with 429 at once.
func TestProbeRequestsShareOneProbe(t *testing.T) {
	g, url := newGate(t)
	h := start(t, gateConfig(t, url, "g"), Options{MaxProbeWaiters: 3})
	waitFor(t, "the first round", h.d.Ready)
	g.armed.Store(true)
	s := h.server("g")
	before := g.lists.Load()

	var replies []<-chan reply
	for range 3 {
		replies = append(replies, h.probeAsync(context.Background(), "g"))
	}
	waitFor(t, "3 requests waiting on one probe", func() bool { return s.waiters() == 3 && g.waiting.Load() == 1 })

	over := <-h.probeAsync(context.Background(), "g")
	if over.code != http.StatusTooManyRequests || over.retry == "" || !strings.Contains(over.body, "too many requests") {
		t.Errorf("a 4th request = %d (Retry-After %q) %q, want 429 with Retry-After", over.code, over.retry, over.body)
	}

	g.open()
	for i, c := range replies {
		r := <-c
		if r.code != http.StatusOK || !strings.Contains(r.body, `mcpwatch_probe_success{server="g"} 1`) {
			t.Errorf("request %d = %d %q", i, r.code, r.body)
		}
	}
	if n := g.lists.Load() - before; n != 1 {
		t.Errorf("3 requests made %d probes, want 1", n)
	}
	if st := h.status("g"); st.Probes != 2 {
		t.Errorf("%d probes recorded, want the first round and one on demand", st.Probes)
	}
}

// A request for a server being probed on schedule waits for that probe
// instead of starting (or queueing) another.
func TestProbeRequestJoinsScheduledProbe(t *testing.T) {
	g, url := newGate(t)
	g.armed.Store(true) // the first round's probe holds
	h := start(t, gateConfig(t, url, "g"), Options{})
	waitFor(t, "the scheduled probe in flight", func() bool { return g.waiting.Load() == 1 })
	s := h.server("g")
	c := h.probeAsync(context.Background(), "g")
	waitFor(t, "the request waiting on it", func() bool { return s.waiters() == 1 })
	g.open()
	if r := <-c; r.code != http.StatusOK {
		t.Errorf("/probe = %d %q", r.code, r.body)
	}
	st := h.status("g")
	if g.lists.Load() != 1 || st.Probes != 1 || len(st.History) != 1 || st.History[0].Trigger != triggerSchedule {
		t.Errorf("%d tools/list, %d probes, history %+v; want only the scheduled probe", g.lists.Load(), st.Probes, st.History)
	}
}

// On-demand probes take at most a quarter of the pool (concurrency 4: one
// at a time), so requests for many servers cannot crowd out the schedule.
func TestOnDemandProbesBounded(t *testing.T) {
	g, url := newGate(t)
	h := start(t, gateConfig(t, url, "a", "b"), Options{})
	waitFor(t, "the first round", h.d.Ready)
	g.armed.Store(true)
	ca := h.probeAsync(context.Background(), "a")
	waitFor(t, "the probe of a in flight", func() bool { return g.waiting.Load() == 1 })
	rb := <-h.probeAsync(context.Background(), "b")
	if rb.code != http.StatusTooManyRequests || !strings.Contains(rb.body, "on-demand") {
		t.Errorf("/probe of b while a's runs = %d %q, want 429", rb.code, rb.body)
	}
	g.open()
	if r := <-ca; r.code != http.StatusOK {
		t.Errorf("/probe of a = %d %q", r.code, r.body)
	}
	if r := <-h.probeAsync(context.Background(), "b"); r.code != http.StatusOK {
		t.Errorf("/probe of b once a's ended = %d %q", r.code, r.body)
	}
}

// An on-demand probe that no request waits for any more is canceled, and
// not recorded against the server.
func TestAbandonedProbeIsCanceled(t *testing.T) {
	g, url := newGate(t)
	h := start(t, gateConfig(t, url, "g"), Options{})
	waitFor(t, "the first round", h.d.Ready)
	g.armed.Store(true)
	s := h.server("g")
	ctx, cancel := context.WithCancel(context.Background())
	c := h.probeAsync(ctx, "g")
	waitFor(t, "the on-demand probe in flight", func() bool { return g.waiting.Load() == 1 })
	cancel()
	<-c
	waitFor(t, "the probe to end", func() bool { return s.waiters() == 0 && g.waiting.Load() == 0 && h.d.onDemand.Load() == 0 })
	if st := h.status("g"); st.Probes != 1 {
		t.Errorf("%d probes recorded, want only the first round's", st.Probes)
	}
}

// turnstile is an MCP server over streamable HTTP whose tools/list, once
// armed, waits for a token: one probe released at a time. It records the
// path (the server) of each tools/list in the order they arrive.
type turnstile struct {
	next    http.Handler
	armed   atomic.Bool
	tokens  chan struct{}
	waiting atomic.Int64
	mu      sync.Mutex
	order   []string
}

func (g *turnstile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/list"`)) && g.armed.Load() {
		g.mu.Lock()
		g.order = append(g.order, strings.TrimPrefix(r.URL.Path, "/"))
		g.mu.Unlock()
		g.waiting.Add(1)
		select {
		case <-g.tokens:
		case <-r.Context().Done():
		}
		g.waiting.Add(-1)
	}
	g.next.ServeHTTP(w, r)
}

func (g *turnstile) arrived() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.order)
}

// A slot that frees goes to the scheduled probe waiting for it, not to an
// on-demand probe that asked before: scheduled probes come first.
func TestScheduledProbesFirst(t *testing.T) {
	g := &turnstile{next: probetest.Handler(probetest.Config{}), tokens: make(chan struct{}, 16)}
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		close(g.tokens)
		srv.Close()
	})
	servers := map[string]any{}
	for _, n := range []string{"s1", "s2", "s3", "s4", "e", "f"} {
		servers[n] = map[string]any{"url": srv.URL + "/" + n, "transport": "http", "timeout": "60s"}
	}
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "concurrency": 4},
		"servers":  servers,
	})
	h := start(t, path, Options{})
	waitFor(t, "the first round", h.d.Ready)
	g.armed.Store(true)
	fire := func(name string) {
		s := h.server(name)
		h.d.mu.RLock()
		gen := s.gen
		h.d.mu.RUnlock()
		h.d.fire(slot{due: time.Now(), name: name, gen: gen})
	}

	for _, n := range []string{"s1", "s2", "s3", "s4"} {
		fire(n)
	}
	waitFor(t, "the pool full of scheduled probes", func() bool { return g.waiting.Load() == 4 })
	f := h.probeAsync(context.Background(), "f")
	waitFor(t, "the on-demand probe waiting", func() bool { _, _, y := h.d.prio.counts(); return y == 1 })
	fire("e")
	waitFor(t, "the scheduled probe waiting", func() bool { s, _, _ := h.d.prio.counts(); return s == 1 })

	g.tokens <- struct{}{} // one slot frees
	waitFor(t, "the freed slot taken", func() bool { return len(g.arrived()) == 5 })
	if got := g.arrived()[4]; got != "e" {
		t.Errorf("the freed slot went to %s, want the scheduled probe of e (arrivals %v)", got, g.arrived())
	}
	g.armed.Store(false) // f and what follows pass at once
	for range 5 {
		g.tokens <- struct{}{}
	}
	if r := <-f; r.code != http.StatusOK {
		t.Errorf("/probe of f = %d %q", r.code, r.body)
	}
}

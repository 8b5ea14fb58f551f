package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type reply struct {
	code  int
	body  string
	retry string
}

// getAsyncCtx is getAsync with the request's context: canceling it is the
// client going away.
func (s *sim) getAsyncCtx(ctx context.Context, path string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", path, nil))
		out <- reply{code: rec.Code, body: rec.Body.String(), retry: rec.Header().Get("Retry-After")}
	}()
	return out
}

// flightConfig is servers of the fake on an hourly schedule: after the
// first round, only the test starts probes.
func flightConfig(names ...string) map[string]any {
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = fakeServerConfig(map[string]any{"timeout": "60s"})
	}
	return map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "concurrency": 4},
		"servers":  servers,
	}
}

// Concurrent /probe requests for one server share one probe; one past the
// per-server bound is turned away with 429 at once.
func TestProbeRequestsShareOneProbe(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), flightConfig("g"), fake, Options{MaxProbeWaiters: 3})
		s.ready()
		hold := make(chan struct{})
		fake.set("g", func(f *fakeServer) { f.hold = hold })

		var replies []<-chan reply
		for range 3 {
			replies = append(replies, s.getAsync("/probe?server=g"))
		}
		s.settle()
		if w, held := s.server("g").waiters(), fake.get("g").waiting; w != 3 || held != 1 {
			t.Fatalf("%d requests wait on %d probes in flight, want 3 on 1", w, held)
		}

		over := <-s.getAsync("/probe?server=g")
		if over.code != http.StatusTooManyRequests || over.retry == "" || !strings.Contains(over.body, "too many requests") {
			t.Errorf("a 4th request = %d (Retry-After %q) %q, want 429 with Retry-After", over.code, over.retry, over.body)
		}

		close(hold)
		for i, c := range replies {
			r := <-c
			if r.code != http.StatusOK || !strings.Contains(r.body, `mcpwatch_probe_success{server="g"} 1`) {
				t.Errorf("request %d = %d %q", i, r.code, r.body)
			}
		}
		if n := fake.get("g").probes; n != 2 {
			t.Errorf("%d probes reached the server, want the first round's and one for the 3 requests", n)
		}
		if st := s.status("g"); st.Probes != 2 {
			t.Errorf("%d probes recorded, want the first round and one on demand", st.Probes)
		}
	})
}

// A request for a server being probed on schedule waits for that probe
// instead of starting (or queueing) another.
func TestProbeRequestJoinsScheduledProbe(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		hold := make(chan struct{})
		fake.set("g", func(f *fakeServer) { f.hold = hold }) // the first round's probe holds
		s := simulate(t, t.TempDir(), flightConfig("g"), fake, Options{})
		s.until("the scheduled probe in flight", time.Minute, func() bool { return fake.get("g").waiting == 1 })
		c := s.getAsync("/probe?server=g")
		s.settle()
		if w := s.server("g").waiters(); w != 1 {
			t.Fatalf("%d requests wait on the scheduled probe, want 1", w)
		}
		close(hold)
		if r := <-c; r.code != http.StatusOK {
			t.Errorf("/probe = %d %q", r.code, r.body)
		}
		st := s.status("g")
		if fake.get("g").probes != 1 || st.Probes != 1 || len(st.History) != 1 || st.History[0].Trigger != triggerSchedule {
			t.Errorf("%d probes made, %d recorded, history %+v; want only the scheduled probe", fake.get("g").probes, st.Probes, st.History)
		}
	})
}

// On-demand probes take at most a quarter of the pool (concurrency 4: one
// at a time), so requests for many servers cannot crowd out the schedule.
func TestOnDemandProbesBounded(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), flightConfig("a", "b"), fake, Options{})
		s.ready()
		hold := make(chan struct{})
		fake.set("a", func(f *fakeServer) { f.hold = hold })
		ca := s.getAsync("/probe?server=a")
		s.settle()
		if fake.get("a").waiting != 1 {
			t.Fatalf("the probe of a is not in flight")
		}
		if rb := <-s.getAsync("/probe?server=b"); rb.code != http.StatusTooManyRequests || !strings.Contains(rb.body, "on-demand") {
			t.Errorf("/probe of b while a's runs = %d %q, want 429", rb.code, rb.body)
		}
		close(hold)
		if r := <-ca; r.code != http.StatusOK {
			t.Errorf("/probe of a = %d %q", r.code, r.body)
		}
		if code, body := s.get("/probe?server=b"); code != http.StatusOK {
			t.Errorf("/probe of b once a's ended = %d %q", code, body)
		}
	})
}

// An on-demand probe that no request waits for any more is canceled, and
// not recorded against the server.
func TestAbandonedProbeIsCanceled(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), flightConfig("g"), fake, Options{})
		s.ready()
		fake.set("g", func(f *fakeServer) { f.hold = make(chan struct{}) }) // never released
		ctx, cancel := context.WithCancel(t.Context())
		c := s.getAsyncCtx(ctx, "/probe?server=g")
		s.settle()
		if fake.get("g").waiting != 1 {
			t.Fatalf("the on-demand probe is not in flight")
		}
		cancel()
		<-c
		s.settle()
		if w, held, n := s.server("g").waiters(), fake.get("g").waiting, s.d.onDemand.Load(); w != 0 || held != 0 || n != 0 {
			t.Errorf("after the request left: %d waiters, %d probes held, %d on demand; want none", w, held, n)
		}
		if st := s.status("g"); st.Probes != 1 {
			t.Errorf("%d probes recorded, want only the first round's", st.Probes)
		}
	})
}

// A slot that frees goes to the scheduled probe waiting for it, not to an
// on-demand probe that asked before: scheduled probes come first.
func TestScheduledProbesFirst(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		names := []string{"s1", "s2", "s3", "s4", "e", "f"}
		s := simulate(t, t.TempDir(), flightConfig(names...), fake, Options{})
		s.ready()
		tokens := make(chan struct{}) // each lets one held probe end
		for _, n := range names {
			fake.set(n, func(f *fakeServer) { f.hold = tokens })
		}
		fire := func(name string) {
			s.d.mu.RLock()
			gen := s.server(name).gen
			s.d.mu.RUnlock()
			s.d.fire(slot{due: time.Now(), name: name, gen: gen})
		}
		started := func() []string {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			return fake.started[len(names):] // after the first round's
		}

		for _, n := range []string{"s1", "s2", "s3", "s4"} {
			fire(n)
		}
		s.settle()
		if got := len(started()); got != 4 {
			t.Fatalf("%d scheduled probes hold the pool of 4, want 4", got)
		}
		f := s.getAsync("/probe?server=f")
		s.settle()
		if _, _, yielding := s.d.prio.counts(); yielding != 1 {
			t.Fatalf("the on-demand probe is not waiting (%d)", yielding)
		}
		fire("e")
		s.settle()
		if waiting, _, _ := s.d.prio.counts(); waiting != 1 {
			t.Fatalf("the scheduled probe of e is not waiting (%d)", waiting)
		}

		tokens <- struct{}{} // one slot frees
		s.settle()
		if got := started(); len(got) != 5 || got[4] != "e" {
			t.Errorf("the freed slot went to %v, want the scheduled probe of e", got)
		}
		close(tokens) // everything passes
		if r := <-f; r.code != http.StatusOK {
			t.Errorf("/probe of f = %d %q", r.code, r.body)
		}
	})
}

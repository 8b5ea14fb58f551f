package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The budget of a /probe follows blackbox_exporter's rule: the scrape's
// timeout less the offset, unless the server's own timeout is shorter or
// the scrape's is shorter than the offset; no header (or 0) is a scrape
// timeout of 120 s.
func TestProbeTimeout(t *testing.T) {
	const offset = 500 * time.Millisecond
	cases := []struct {
		header string
		server time.Duration
		want   time.Duration
		err    bool
	}{
		{header: "", server: 10 * time.Second, want: 10 * time.Second},
		{header: "", server: 5 * time.Minute, want: 119500 * time.Millisecond},
		{header: "0", server: 5 * time.Minute, want: 119500 * time.Millisecond},
		{header: "5", server: 10 * time.Second, want: 4500 * time.Millisecond},
		{header: "9.75", server: 10 * time.Second, want: 9250 * time.Millisecond},
		{header: "5", server: 2 * time.Second, want: 2 * time.Second},
		{header: "0.3", server: 10 * time.Second, want: 10 * time.Second}, // shorter than the offset
		{header: "-4", server: 10 * time.Second, want: 10 * time.Second},
		{header: "ten", err: true},
		{header: "NaN", err: true},
		{header: "+Inf", err: true},
		{header: "1e300", err: true},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/probe?server=a", nil)
		if tc.header != "" {
			r.Header.Set(scrapeTimeoutHeader, tc.header)
		}
		got, err := probeTimeout(r, tc.server, offset)
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), scrapeTimeoutHeader)):
			t.Errorf("header %q: %s, %v; want an error naming the header", tc.header, got, err)
		case !tc.err && (err != nil || got != tc.want):
			t.Errorf("header %q, server timeout %s: %s, %v; want %s", tc.header, tc.server, got, err, tc.want)
		}
	}
}

// getScrape is a /probe as Prometheus sends it, with its scrape timeout.
func (s *sim) getScrape(path, timeout string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		req := httptest.NewRequestWithContext(context.Background(), "GET", path, nil)
		req.Header.Set(scrapeTimeoutHeader, timeout)
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		out <- reply{code: rec.Code, body: rec.Body.String()}
	}()
	return out
}

// A /probe with a scrape timeout gives its probe the scrape's timeout less
// the offset (the server's 60 s is longer): a server that stalls is cut
// there and answered as a timeout, within the scrape, as blackbox_exporter
// answers; without the header the server's own timeout holds.
func TestProbeHonoursTheScrapeTimeout(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), flightConfig("g"), fake, Options{})
		s.ready()

		if r := <-s.getScrape("/probe?target=g", "5"); r.code != http.StatusOK || !strings.Contains(r.body, `mcpwatch_probe_success{server="g"} 1`) {
			t.Fatalf("/probe with a 5 s scrape = %d %q", r.code, r.body)
		}
		s.settle() // the on-demand probe has let go of its turn
		if r := <-s.getAsync("/probe?server=g"); r.code != http.StatusOK {
			t.Fatalf("/probe without the header = %d %q", r.code, r.body)
		}
		if got, want := fake.get("g").budgets, []time.Duration{0, 4500 * time.Millisecond, 60 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("the probes' budgets %v, want %v (the first round's none, the scrape's 5 s less 0.5 s, the server's timeout)", got, want)
		}

		fake.set("g", func(f *fakeServer) { f.hold = make(chan struct{}) }) // stalls
		began := time.Now()
		s.settle()
		r := <-s.getScrape("/probe?server=g", "3")
		if took := time.Since(began); took != 2500*time.Millisecond {
			t.Errorf("a stalling server was answered after %s, want the 2.5 s of the scrape's 3 s less 0.5 s", took)
		}
		if r.code != http.StatusOK || !strings.Contains(r.body, `mcpwatch_probe_success{server="g"} 0`) ||
			!strings.Contains(r.body, `mcpwatch_probe_failures_total{reason="timeout",server="g"} 1`) {
			t.Errorf("/probe of a stalling server = %d %q, want its metrics with a timeout", r.code, r.body)
		}

		s.settle()
		if r := <-s.getScrape("/probe?server=g", "soon"); r.code != http.StatusBadRequest || !strings.Contains(r.body, scrapeTimeoutHeader) {
			t.Errorf("an unreadable header = %d %q, want 400 naming it", r.code, r.body)
		}
	})
}

// A /probe that joins a probe already in flight waits for it until the
// scrape's deadline, and then says so (503) instead of outliving the
// scrape; one that gets no slot before the deadline says that.
func TestProbeScrapeDeadlineWhileWaiting(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		doc := flightConfig("g", "h")
		doc["defaults"].(map[string]any)["concurrency"] = 1
		s := simulate(t, t.TempDir(), doc, fake, Options{})
		s.ready()
		hold := make(chan struct{})
		fake.set("g", func(f *fakeServer) { f.hold = hold })
		s.d.mu.RLock()
		gen := s.server("g").gen
		s.d.mu.RUnlock()
		s.d.fire(slot{due: time.Now(), name: "g", gen: gen}) // a scheduled probe of g, held
		s.settle()

		began := time.Now()
		r := <-s.getScrape("/probe?server=g", "2")
		if took := time.Since(began); r.code != http.StatusServiceUnavailable || !strings.Contains(r.body, "did not end before the scrape's deadline") || took != 1500*time.Millisecond {
			t.Errorf("joining a held probe = %d %q after %s, want 503 after 1.5 s", r.code, r.body, took)
		}
		if w := s.server("g").waiters(); w != 0 {
			t.Errorf("%d requests still wait for g's probe", w)
		}

		// g holds the one slot: h's on-demand probe gets none in time.
		began = time.Now()
		r = <-s.getScrape("/probe?server=h", "2")
		if took := time.Since(began); r.code != http.StatusServiceUnavailable || !strings.Contains(r.body, "no probe slot was free before the") || took != 1500*time.Millisecond {
			t.Errorf("a probe without a slot = %d %q after %s, want 503 after 1.5 s", r.code, r.body, took)
		}
		close(hold)
		s.settle()
		if st := s.status("h"); st.Probes != 1 {
			t.Errorf("h: %d probes recorded; a probe that never got a slot is not the server's failure", st.Probes)
		}
	})
}

// A header value is cut as every other text is (sanitize.Line): between
// runes, marked "…" (it was cut on a byte and marked "...").
func TestTruncateHeaderCutsBetweenRunes(t *testing.T) {
	got := truncateHeader("a" + strings.Repeat("é", 40))
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 32+len("…") {
		t.Errorf("truncateHeader = %q", got)
	}
}

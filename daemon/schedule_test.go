package daemon

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// slowLister wraps a test server: every tools/list waits a while, and the
// wrapper counts how many are in progress at once.
type slowLister struct {
	next  http.Handler
	delay time.Duration
	// gather, when positive, holds each tools/list until that many are in
	// progress at once (once reached, the gate stays open), so a test of a
	// bound sees it reached whatever the machine's load; only a bound lower
	// than gather makes a list wait for its probe's deadline.
	gather      int32
	gathered    chan struct{}
	gatherOnce  sync.Once
	inList      atomic.Int32
	maxInList   atomic.Int32
	lists       atomic.Int32
	failWith500 atomic.Bool
}

func (s *slowLister) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.failWith500.Load() {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/list"`)) {
		n := s.inList.Add(1)
		for {
			m := s.maxInList.Load()
			if n <= m || s.maxInList.CompareAndSwap(m, n) {
				break
			}
		}
		s.lists.Add(1)
		defer s.inList.Add(-1)
		if s.gather > 0 {
			if n >= s.gather {
				s.gatherOnce.Do(func() { close(s.gathered) })
			}
			select {
			case <-s.gathered:
			case <-r.Context().Done():
				return
			}
		}
		time.Sleep(s.delay)
	}
	s.next.ServeHTTP(w, r)
}

// A server whose probe outlasts its interval is never probed twice at once:
// firings meanwhile are skipped (and counted), and an on-demand probe waits
// its turn.
func TestNoOverlappingProbesOfOneServer(t *testing.T) {
	lister := &slowLister{next: probetest.Handler(probetest.Config{}), delay: 150 * time.Millisecond}
	srv := httptest.NewServer(lister)
	defer srv.Close()
	dir := t.TempDir()
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 10ms", "concurrency": 8},
		"servers":  map[string]any{"slow": map[string]any{"url": srv.URL, "transport": "http"}},
	})
	h := start(t, path, Options{})

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if code, body := h.get("/probe?server=slow"); code != http.StatusOK {
				t.Errorf("/probe = %d %s", code, body)
			}
		})
	}
	wg.Wait()
	waitFor(t, "ten tools/list calls", func() bool { return lister.lists.Load() >= 10 })

	if m := lister.maxInList.Load(); m != 1 {
		t.Errorf("%d probes of one server listed tools at once, want 1", m)
	}
	if st := h.status("slow"); st.Skipped == 0 {
		t.Errorf("no firing was skipped although each probe outlasts the interval 15 times")
	}
	var skippedLogged bool
	for _, e := range h.logs.All() {
		if strings.HasPrefix(e.Message, "probe skipped") {
			skippedLogged = true
		}
	}
	if !skippedLogged {
		t.Errorf("skipped firings are not logged at debug level")
	}
}

// The era found by a probe is remembered, so later probes skip detection;
// a failure that suggests the server changed forgets it. The probes after
// the first are asked for one at a time, so the server fails or heals only
// between two probes, never in the middle of one.
func TestEraIsRememberedAndForgotten(t *testing.T) {
	ts := probetest.NewServer(probetest.Config{Era: probetest.EraLegacy})
	defer ts.Close()
	lister := &slowLister{next: ts}
	srv := httptest.NewServer(lister)
	defer srv.Close()
	dir := t.TempDir()
	path := writeConfig(t, dir, map[string]any{
		// February 30th never comes: the first round's probe is the only
		// scheduled one.
		"defaults": map[string]any{"schedule": "0 0 30 2 *"},
		"servers":  map[string]any{"legacy": map[string]any{"url": srv.URL, "transport": "http"}},
	})
	h := start(t, path, Options{})
	probeOnce := func() apiServer {
		t.Helper()
		if code, body := h.get("/probe?server=legacy"); code != http.StatusOK {
			t.Fatalf("GET /probe: %d %s", code, body)
		}
		return h.status("legacy")
	}

	waitFor(t, "the first probe", func() bool { return h.status("legacy").Probes >= 1 })
	for range 4 {
		probeOnce()
	}
	st := h.status("legacy")
	if st.Probes != 5 {
		t.Fatalf("%d probes, want 5", st.Probes)
	}
	if n := ts.Received("server/discover"); n != 1 {
		t.Errorf("server/discover sent %d times in five probes, want once (the era is remembered)", n)
	}
	if st.Era != probe.EraLegacy {
		t.Errorf("era = %q, want legacy", st.Era)
	}

	lister.failWith500.Store(true)
	if st := probeOnce(); st.State != verdict.StateFailed || st.Reason != probe.ReasonHTTPStatus {
		t.Fatalf("state %q reason %q, want failed with http_status", st.State, st.Reason)
	}
	lister.failWith500.Store(false)
	if st := probeOnce(); st.State != verdict.StateOK {
		t.Fatalf("state %q (reason %q) once the server is back, want ok", st.State, st.Reason)
	}
	if n := ts.Received("server/discover"); n != 2 {
		t.Errorf("server/discover sent %d times, want 2: the era is detected again after an http_status failure", n)
	}
}

func TestParseSchedule(t *testing.T) {
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		spec     string
		next     time.Time
		interval time.Duration
		err      string
	}{
		{spec: "@every 30s", next: base.Add(30 * time.Second), interval: 30 * time.Second},
		{spec: "@every 100ms", next: base.Add(100 * time.Millisecond), interval: 100 * time.Millisecond},
		{spec: "*/5 * * * *", next: base.Add(5 * time.Minute)},
		{spec: "@hourly", next: base.Add(time.Hour)},
		{spec: "@every 0s", err: "must be positive"},
		{spec: "@every soon", err: "invalid duration"},
		{spec: "every minute", err: "five-field cron expression"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			s, interval, err := parseSchedule(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(base); !got.Equal(tc.next) {
				t.Errorf("next = %s, want %s", got, tc.next)
			}
			if interval != tc.interval {
				t.Errorf("interval = %s, want %s", interval, tc.interval)
			}
		})
	}
}

// A daemon that fell behind skips the firings it missed instead of running
// them in a burst.
func TestNextAfterSkipsMissedFirings(t *testing.T) {
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := every(time.Second)
	if got := nextAfter(s, base, base.Add(100*time.Millisecond)); !got.Equal(base.Add(time.Second)) {
		t.Errorf("on time: next = %s", got)
	}
	late := base.Add(10*time.Second + 500*time.Millisecond)
	if got := nextAfter(s, base, late); !got.After(late) {
		t.Errorf("behind: next = %s, not after now %s", got, late)
	}
}

// The history keeps failures apart, so a run of passing probes does not
// push the last failure out.
func TestHistoryKeepsFailures(t *testing.T) {
	h := newHistory(3)
	h.add(Record{Seq: 1, State: verdict.StateFailed, Reason: probe.ReasonTimeout})
	for seq := uint64(2); seq <= 10; seq++ {
		h.add(Record{Seq: seq, State: verdict.StateOK})
	}
	got := h.records()
	var seqs []uint64
	for _, r := range got {
		seqs = append(seqs, r.Seq)
	}
	want := []uint64{10, 9, 8, 1}
	if len(seqs) != len(want) {
		t.Fatalf("records = %v, want %v", seqs, want)
	}
	for i := range want {
		if seqs[i] != want[i] {
			t.Fatalf("records = %v, want %v", seqs, want)
		}
	}
}

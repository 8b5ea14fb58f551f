package daemon

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// skips reads mcpwatch_probes_skipped_total by reason from a scrape.
func (s *sim) skips() map[string]uint64 {
	s.t.Helper()
	text := s.metricsText()
	out := map[string]uint64{}
	for _, r := range metrics.SkipReasons {
		v := metricValue(text, `mcpwatch_probes_skipped_total{reason="`+r+`"}`)
		if v == "" {
			s.t.Fatalf("/metrics lacks mcpwatch_probes_skipped_total{reason=%q}", r)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			s.t.Fatalf("mcpwatch_probes_skipped_total{reason=%q} = %q", r, v)
		}
		out[r] = n
	}
	return out
}

// fireNow fires the server's schedule as if its slot were due at due.
func (s *sim) fireNow(name string, due time.Time) {
	s.d.mu.RLock()
	gen := s.server(name).gen
	s.d.mu.RUnlock()
	s.d.fire(slot{due: due, name: name, gen: gen})
}

// A server slower than its interval skips firings as still_running; every
// reason is exported from 0, and the server's own count (the API's
// skipped) agrees with the metric.
func TestSkippedStillRunning(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("slow", func(f *fakeServer) { f.took = 2500 * time.Millisecond })
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1s", "concurrency": 4},
			"servers":  map[string]any{"slow": fakeServerConfig(nil)},
		}, fake, Options{FirstRoundSpread: time.Millisecond})
		if got := s.skips(); got[metrics.SkipStillRunning] != 0 || got[metrics.SkipStillQueued] != 0 {
			t.Fatalf("skips before any probe: %v", got)
		}
		s.advance(20 * time.Second)
		got := s.skips()
		if got[metrics.SkipStillRunning] < 10 || got[metrics.SkipStillQueued] != 0 || got[metrics.SkipLate] != 0 {
			t.Errorf("skips of a server 2.5 times slower than its interval: %v, want about 2 of 3 still_running", got)
		}
		if st := s.status("slow"); st.Skipped != got[metrics.SkipStillRunning] {
			t.Errorf("the API says %d skipped, the metric %d", st.Skipped, got[metrics.SkipStillRunning])
		}
	})
}

// When the pool is too small, a server whose previous probe still waits
// for a slot skips as still_queued (and the one holding the slot as
// still_running), and the daemon warns, once, that concurrency is too low.
func TestSkippedStillQueued(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1s", "concurrency": 1},
			"servers":  map[string]any{"hog": fakeServerConfig(nil), "q": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		fake.set("hog", func(f *fakeServer) { f.hold = make(chan struct{}) }) // holds the one slot
		s.until("hog holding the slot", time.Minute, func() bool { return fake.get("hog").waiting == 1 })
		s.advance(10 * time.Second)

		got := s.skips()
		if got[metrics.SkipStillQueued] < 8 || got[metrics.SkipStillRunning] < 8 {
			t.Errorf("skips with the one slot held: %v, want q's firings still_queued and hog's still_running", got)
		}
		if st := s.status("q"); st.Skipped < 8 {
			t.Errorf("q skipped %d firings, want one a second", st.Skipped)
		}
		warned := 0
		for _, e := range s.logs.All() {
			if strings.HasPrefix(e.Message, "probes skipped: the previous probe of a server was still waiting for a free slot") {
				warned++
				if e.ContextMap()["concurrency"] != int64(1) {
					t.Errorf("the warning's fields: %v, want concurrency 1", e.ContextMap())
				}
			}
		}
		if warned != 1 {
			t.Errorf("warned %d times in 10 s, want once (at most once every %s)", warned, queueWarnEvery)
		}
	})
}

// A firing that comes due long after its time (the daemon starved or the
// machine suspended) runs once, and the firings missed meanwhile are
// skipped as late, not run in a burst.
func TestSkippedLate(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1s"},
			"servers":  map[string]any{"a": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		before := s.skips()[metrics.SkipLate]
		s.fireNow("a", time.Now().Add(-10500*time.Millisecond))
		s.settle()
		if got := s.skips()[metrics.SkipLate] - before; got != 10 {
			t.Errorf("a firing 10.5 s late skipped %d, want the 10 firings missed", got)
		}
	})
}

// A call firing that finds the previous one still waiting for the
// server's probe to end is skipped as calls_still_waiting.
func TestSkippedCallsStillWaiting(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 1s"},
			"servers":  map[string]any{"report": fakeServerConfig(map[string]any{"calls": twoContracts})},
		}, fake, Options{})
		s.ready()
		fake.set("report", func(f *fakeServer) { f.hold = make(chan struct{}) })
		s.advance(10 * time.Second)
		if got := s.skips(); got[metrics.SkipCallsStillWaiting] < 5 || got[metrics.SkipStillQueued] != 0 {
			t.Errorf("skips with a call probe held: %v, want calls_still_waiting", got)
		}
	})
}

// missedFirings counts what nextAfter skipped: nothing on time; by
// arithmetic for an interval; firing by firing for a cron expression.
func TestMissedFirings(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := phased{interval: 10 * time.Second, phase: 3 * time.Second}
	onGrid := p.gridAfter(now.Add(-time.Hour))
	cronSched, err := cron.ParseStandard("*/5 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		s    schedule
		due  time.Time
		want int
	}{
		{"phased, on time", p, now.Add(-time.Second), 0},
		{"phased, an hour late", p, onGrid, 359},
		{"every, on time", every(time.Second), now.Add(-500 * time.Millisecond), 0},
		{"every, 10.5 s late", every(time.Second), now.Add(-10500 * time.Millisecond), 10},
		{"cron, an hour late", cronSched, now.Add(-time.Hour), 12}, // 11:05 to 12:00
	}
	for _, tc := range cases {
		next := nextAfter(tc.s, tc.due, now)
		if got := missedFirings(tc.s, tc.due, next, now); got != tc.want {
			t.Errorf("%s: %d missed (due %s, next %s), want %d", tc.name, got, tc.due.Format(time.TimeOnly), next.Format(time.TimeOnly), tc.want)
		}
	}
}

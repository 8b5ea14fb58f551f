package daemon

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A server whose probe outlasts its interval is never probed twice at once:
// firings meanwhile are skipped (and counted, and logged at debug level),
// and on-demand probes wait their turn.
func TestNoOverlappingProbesOfOneServer(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("slow", func(s *fakeServer) { s.took = 150 * time.Millisecond })
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 10ms", "concurrency": 8},
			"servers":  map[string]any{"slow": fakeServerConfig(nil)},
		}, fake, Options{})

		var replies []<-chan reply
		for range 3 {
			replies = append(replies, s.getAsync("/probe?server=slow"))
		}
		for _, c := range replies {
			if r := <-c; r.code != http.StatusOK {
				t.Errorf("/probe = %d %s", r.code, r.body)
			}
		}
		s.until("ten probes", time.Minute, func() bool { return fake.get("slow").probes >= 10 })

		if m := fake.get("slow").most; m != 1 {
			t.Errorf("%d probes of one server ran at once, want 1", m)
		}
		if st := s.status("slow"); st.Skipped == 0 {
			t.Errorf("no firing was skipped although each probe outlasts the interval 15 times")
		}
		var skippedLogged bool
		for _, e := range s.logs.All() {
			if strings.HasPrefix(e.Message, "probe skipped") {
				skippedLogged = true
			}
		}
		if !skippedLogged {
			t.Errorf("skipped firings are not logged at debug level")
		}
	})
}

// The era found by a probe is remembered and given to the next probes as
// their hint, so they skip detection; a failure that suggests the server
// changed forgets it, and the probe after detects again.
func TestEraIsRememberedAndForgotten(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("legacy", func(s *fakeServer) { s.era = probe.EraLegacy })
		s := simulate(t, t.TempDir(), map[string]any{
			// February 30th never comes: the first round's probe is the only
			// scheduled one.
			"defaults": map[string]any{"schedule": "0 0 30 2 *"},
			"servers":  map[string]any{"legacy": fakeServerConfig(nil)},
		}, fake, Options{})
		probeOnce := func() apiServer {
			t.Helper()
			if code, body := s.get("/probe?server=legacy"); code != http.StatusOK {
				t.Fatalf("GET /probe: %d %s", code, body)
			}
			return s.status("legacy")
		}
		s.ready()
		for range 4 {
			probeOnce()
		}
		if st := s.status("legacy"); st.Probes != 5 || st.Era != probe.EraLegacy {
			t.Fatalf("%d probes, era %q; want 5, legacy", st.Probes, st.Era)
		}

		fake.set("legacy", func(s *fakeServer) { s.fail = probe.ReasonHTTPStatus })
		if st := probeOnce(); st.State != verdict.StateFailed || st.Reason != probe.ReasonHTTPStatus {
			t.Fatalf("state %q reason %q, want failed with http_status", st.State, st.Reason)
		}
		fake.set("legacy", func(s *fakeServer) { s.fail = "" })
		if st := probeOnce(); st.State != verdict.StateOK {
			t.Fatalf("state %q (reason %q) once the server is back, want ok", st.State, st.Reason)
		}
		probeOnce()
		want := []probe.Era{"", probe.EraLegacy, probe.EraLegacy, probe.EraLegacy, probe.EraLegacy,
			probe.EraLegacy, // the probe that failed with http_status
			"",              // detected again
			probe.EraLegacy}
		if got := fake.get("legacy").eras; !slices.Equal(got, want) {
			t.Errorf("era hints %q, want %q", got, want)
		}
	})
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
		{spec: "@every 0s", err: `"@every 0s" is not a schedule (the interval must be positive); use a cron expression like "*/5 * * * *" or "@every 30s"`},
		{spec: "@every -5s", err: "the interval must be positive"},
		{spec: "@every soon", err: `"soon" is not a duration such as 30s or 5m`},
		{spec: "every minute", err: `"every minute" is not a schedule (expected exactly 5 fields, found 2: [every minute])`},
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

// The era is remembered by the rule check's era cache follows
// (eracache.SameTarget, eracache.ForgetsEra): a rotated header keeps it
// (serve dropped it, check kept it), and a timeout keeps it too.
func TestEraKeptAcrossARotatedHeaderAndATimeout(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("legacy", func(s *fakeServer) { s.era = probe.EraLegacy })
		dir := t.TempDir()
		doc := func(token string) map[string]any {
			return map[string]any{
				"defaults": map[string]any{"schedule": "0 0 30 2 *"},
				"servers":  map[string]any{"legacy": fakeServerConfig(map[string]any{"headers": map[string]any{"Authorization": "Bearer " + token}})},
			}
		}
		s := simulate(t, dir, doc("old-token-1"), fake, Options{})
		probeOnce := func() {
			t.Helper()
			if code, body := s.get("/probe?server=legacy"); code != http.StatusOK {
				t.Fatalf("GET /probe: %d %s", code, body)
			}
		}
		s.ready()
		writeConfig(t, dir, doc("new-token-2"))
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		probeOnce()
		fake.set("legacy", func(s *fakeServer) { s.fail = probe.ReasonTimeout })
		probeOnce()
		fake.set("legacy", func(s *fakeServer) { s.fail = "" })
		probeOnce()
		want := []probe.Era{"", probe.EraLegacy, probe.EraLegacy, probe.EraLegacy}
		if got := fake.get("legacy").eras; !slices.Equal(got, want) {
			t.Errorf("era hints %q, want %q", got, want)
		}
	})
}

package preflight_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// observe probes servers for real, in name order. The deadline is only a
// bound: these servers answer, exit or fail to start, and a -race test
// server on a loaded machine can take seconds to, which must not turn into
// a timeout.
func observe(t *testing.T, servers map[string]map[string]any) []preflight.Observation {
	t.Helper()
	cfg := loadConfig(t, servers)
	return preflight.Observe(t.Context(), cfg.Servers, preflight.Options{Timeout: time.Minute})
}

func TestRelockRefuses(t *testing.T) {
	old := `{"report": ["fetch_daily_report", "list_report_dates"]}`
	cases := []struct {
		name       string
		servers    map[string]map[string]any
		allowEmpty bool
		refused    []string // "server: reason"
		message    string
	}{
		{name: "failed probe", servers: map[string]map[string]any{
			"report": testServer(probetest.Config{}, nil),
			"ghost":  {"command": "/nonexistent/no-such-binary"},
		}, refused: []string{"ghost: spawn_failed"}, message: "probe failed (spawn_failed)"},
		{name: "empty list", servers: map[string]map[string]any{
			"report": testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
		}, refused: []string{"report: empty"}, message: "lists no tools"},
		{name: "empty list allowed, failed probe still refused", servers: map[string]map[string]any{
			"report": testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
			"quiet":  testServer(probetest.Config{Behavior: probetest.ExitAtOnce}, nil),
		}, allowEmpty: true, refused: []string{"quiet: exited"}, message: "probe failed (exited)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oldLock := parseLock(t, old)
			plan, err := preflight.Relock(oldLock, observe(t, tc.servers), preflight.RelockOptions{AllowEmpty: tc.allowEmpty, Prune: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range plan.Refused {
				got = append(got, r.Server+": "+r.Reason)
			}
			if !slices.Equal(got, tc.refused) || plan.Lock != nil {
				t.Fatalf("refused %q (lock %v), want %q", got, plan.Lock != nil, tc.refused)
			}
			if !strings.Contains(plan.Refused[0].Message, tc.message) {
				t.Errorf("message %q, want %q in it", plan.Refused[0].Message, tc.message)
			}
			if string(oldLock.Marshal()) != string(parseLock(t, old).Marshal()) {
				t.Error("the old lock was changed")
			}
		})
	}
}

func TestRelockWrites(t *testing.T) {
	// A hand-formatted entry for a server that is not relocked keeps its bytes.
	old := "{\n  \"other\": [ \"b\",\"a\" ],\n  \"report\": [\"fetch_daily_report\", \"gone_tool\"]\n}\n"
	servers := map[string]map[string]any{
		"report": testServer(probetest.Config{}, nil),
		"empty":  testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
	}
	obs := observe(t, servers)

	t.Run("selected servers", func(t *testing.T) {
		plan, err := preflight.Relock(parseLock(t, old), obs, preflight.RelockOptions{AllowEmpty: true})
		if err != nil || len(plan.Refused) > 0 {
			t.Fatalf("err %v refused %+v", err, plan.Refused)
		}
		got := string(plan.Lock.Marshal())
		want := "{\n  \"empty\": [],\n  \"other\": [ \"b\",\"a\" ],\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ]\n}\n"
		if got != want {
			t.Errorf("lock:\n%s\nwant:\n%s", got, want)
		}
		var changes []string
		for _, c := range plan.Changes {
			changes = append(changes, c.String())
		}
		wantChanges := []string{"report: + list_report_dates; - gone_tool"}
		if !slices.Equal(changes, wantChanges) {
			// "empty" is new with no tools: nothing to add or remove.
			t.Errorf("changes %q, want %q", changes, wantChanges)
		}
	})
	t.Run("prune", func(t *testing.T) {
		plan, err := preflight.Relock(parseLock(t, old), obs, preflight.RelockOptions{AllowEmpty: true, Prune: true})
		if err != nil || len(plan.Refused) > 0 {
			t.Fatalf("err %v refused %+v", err, plan.Refused)
		}
		if got := plan.Lock.Servers(); !slices.Equal(got, []string{"empty", "report"}) {
			t.Errorf("servers %q, want other dropped", got)
		}
	})
	t.Run("fingerprints are kept once locked", func(t *testing.T) {
		first, err := preflight.Relock(nil, obs, preflight.RelockOptions{AllowEmpty: true, Fingerprints: true})
		if err != nil {
			t.Fatal(err)
		}
		again, err := preflight.Relock(first.Lock, obs, preflight.RelockOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := again.Lock.Entry("report")
		if len(e.Tools) == 0 {
			t.Fatalf("report has no locked tools: %+v", e)
		}
		if e.Tools[0].Schema == "" || e.Tools[0].Description == "" {
			t.Errorf("relocking without --fingerprints dropped them: %+v", e.Tools)
		}
		if string(first.Lock.Marshal()) != string(again.Lock.Marshal()) || len(again.Changes) != 0 {
			t.Errorf("an unchanged surface changed the lock: %+v", again.Changes)
		}
	})
}

// A lock the Python preflight wrote (names only, no final newline) relocked
// from the same surface is rewritten byte for byte.
func TestRelockSeedLockUnchanged(t *testing.T) {
	seed := "{\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ]\n}"
	plan, err := preflight.Relock(parseLock(t, seed), observe(t, map[string]map[string]any{
		"report": testServer(probetest.Config{}, nil),
	}), preflight.RelockOptions{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(plan.Lock.Marshal()); got != seed {
		t.Errorf("got\n%q\nwant\n%q", got, seed)
	}
}

// Relocking every server keeps the entries of skipped ones byte for byte.
func TestRelockKeepsSkipped(t *testing.T) {
	old := "{\n  \"gone\": [\"x\"],\n  \"skipped\": [\n    \"b\",\n    \"a\"\n  ]\n}"
	obs := observe(t, map[string]map[string]any{"report": testServer(probetest.Config{}, nil)})
	plan, err := preflight.Relock(parseLock(t, old), obs, preflight.RelockOptions{Prune: true, Keep: []string{"skipped"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Lock.Servers(); !slices.Equal(got, []string{"report", "skipped"}) {
		t.Fatalf("servers %q, want report and skipped (gone pruned)", got)
	}
	if got := string(plan.Lock.Marshal()); !strings.Contains(got, "\"skipped\": [\n    \"b\",\n    \"a\"\n  ]") {
		t.Errorf("the skipped entry changed:\n%s", got)
	}
}

package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// The lock check every second visits the servers only when the lock
// changed: an unchanged lock costs a look at the file, not a visit of each
// server (it visited every server every second).
func TestLockCheckVisitsServersOnlyWhenTheLockChanges(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		lock := writeFile(t, dir, "mcp-tools.lock.json", `{"a": ["fetch_daily_report"], "b": ["fetch_daily_report"], "c": ["fetch_daily_report"]}`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"a": fakeServerConfig(nil), "b": fakeServerConfig(nil), "c": fakeServerConfig(nil)},
		}, newFakeProber(), Options{})
		s.ready()
		s.advance(lockCheckInterval) // the servers added at start are visited once
		before := s.d.relocks.visits.Load()
		for range 10 {
			s.advance(lockCheckInterval)
		}
		if n := s.d.relocks.visits.Load() - before; n != 0 {
			t.Errorf("10 checks of an unchanged lock visited servers %d times; want 0", n)
		}

		writeFile(t, dir, "next.json", `{"a": ["fetch_daily_report", "send_report"], "b": ["fetch_daily_report"], "c": ["fetch_daily_report"]}`)
		if err := os.Rename(filepath.Join(dir, "next.json"), lock); err != nil {
			t.Fatal(err)
		}
		before = s.d.relocks.visits.Load()
		s.advance(lockCheckInterval)
		if n := s.d.relocks.visits.Load() - before; n != 3 {
			t.Errorf("a changed lock: %d servers visited, want 3", n)
		}
		if st := s.status("a"); st.State != verdict.StateMissing {
			t.Errorf("a: state %s after the lock gained send_report; want missing", st.State)
		}
		before = s.d.relocks.visits.Load()
		s.advance(lockCheckInterval)
		if n := s.d.relocks.visits.Load() - before; n != 0 {
			t.Errorf("the check after the change visited servers %d times; want 0", n)
		}
	})
}

// A probe that records a lock read before the check's latest (it read
// the lock just before the check did) has the next check visit the
// servers, so that none keeps the older lock until its next probe.
func TestLockCheckVisitsAfterAnOlderLockIsRecorded(t *testing.T) {
	var r relocks
	older, latest := lockstore.New(), lockstore.New()
	if !r.due(latest) {
		t.Fatal("the first lock was not due")
	}
	if r.due(latest) {
		t.Error("the same lock again was due")
	}
	r.recorded(latest)
	if r.due(latest) {
		t.Error("a probe that recorded the latest lock made a visit due")
	}
	r.recorded(older)
	if !r.due(latest) {
		t.Error("a probe that recorded an older lock made no visit due")
	}
	if r.due(latest) {
		t.Error("a visit stays due after it was made")
	}
	var none *relocks
	none.recorded(older) // a server without a daemon (tests)
}

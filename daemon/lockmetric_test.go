package daemon

import (
	"os"
	"strings"
	"testing"
)

// A lock file that is broken or missing is exported as a failed read, the
// last good lock staying in force; a good one as a success with its time.
// The file is looked at every lockCheckInterval.
func TestLockReadMetric(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		lock := writeFile(t, dir, "mcp-tools.lock.json", `{ not json`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"x": fakeServerConfig(nil)},
		}, newFakeProber(), Options{})
		sample := func(name string) string {
			for line := range strings.SplitSeq(s.metricsText(), "\n") {
				if v, ok := strings.CutPrefix(line, name+" "); ok {
					return v
				}
			}
			return "absent"
		}
		if v := sample("mcpwatch_lock_last_read_successful"); v != "0" {
			t.Fatalf("a broken lock at start: mcpwatch_lock_last_read_successful = %s, want 0", v)
		}
		if v := sample("mcpwatch_lock_last_read_success_timestamp_seconds"); v != "0" {
			t.Errorf("no lock read yet: timestamp = %s, want 0", v)
		}

		writeFile(t, dir, "mcp-tools.lock.json", `{"x": ["a"]}`)
		s.advance(lockCheckInterval)
		if v := sample("mcpwatch_lock_last_read_successful"); v != "1" {
			t.Fatalf("the fixed lock: successful = %s, want 1", v)
		}
		good := sample("mcpwatch_lock_last_read_success_timestamp_seconds")
		if good == "0" || good == "absent" {
			t.Errorf("timestamp after a good read = %s", good)
		}
		if st := s.status("x"); !st.Diff.Locked {
			t.Errorf("x is not locked after the good read")
		}

		s.advance(lockCheckInterval) // the next read is at a later time
		writeFile(t, dir, "mcp-tools.lock.json", `{"x": ["a"],}`)
		s.advance(lockCheckInterval)
		if v := sample("mcpwatch_lock_last_read_successful"); v != "0" {
			t.Errorf("the broken lock: successful = %s, want 0", v)
		}
		if v := sample("mcpwatch_lock_last_read_success_timestamp_seconds"); v != good {
			t.Errorf("timestamp after a failed read = %s, want the last success %s", v, good)
		}
		if st := s.status("x"); !st.Diff.Locked {
			t.Errorf("the last good lock is no longer in force")
		}

		writeFile(t, dir, "mcp-tools.lock.json", `{"x": ["a", "b"]}`)
		s.advance(lockCheckInterval)
		if v := sample("mcpwatch_lock_last_read_successful"); v != "1" {
			t.Errorf("the lock fixed again: successful = %s, want 1", v)
		}
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		s.advance(lockCheckInterval)
		if v := sample("mcpwatch_lock_last_read_successful"); v != "0" {
			t.Errorf("the removed lock: successful = %s, want 0", v)
		}
	})
}

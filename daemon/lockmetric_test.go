package daemon

import (
	"os"
	"strings"
	"testing"
)

// A lock file that is broken or missing is exported as a failed read, the
// last good lock staying in force; a good one as a success with its time.
func TestLockReadMetric(t *testing.T) {
	dir := t.TempDir()
	lock := writeFile(t, dir, "mcp-tools.lock.json", `{ not json`)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"x": map[string]any{"url": "http://127.0.0.1:1/mcp"}},
	})
	h := start(t, path, Options{})
	sample := func(name string) string {
		for line := range strings.SplitSeq(h.metricsText(), "\n") {
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
	waitFor(t, "the fixed lock to be read", func() bool { return sample("mcpwatch_lock_last_read_successful") == "1" })
	good := sample("mcpwatch_lock_last_read_success_timestamp_seconds")
	if good == "0" || good == "absent" {
		t.Errorf("timestamp after a good read = %s", good)
	}
	if st := h.status("x"); !st.Diff.Locked {
		t.Errorf("x is not locked after the good read")
	}

	writeFile(t, dir, "mcp-tools.lock.json", `{"x": ["a"],}`)
	waitFor(t, "the broken lock to be seen", func() bool { return sample("mcpwatch_lock_last_read_successful") == "0" })
	if v := sample("mcpwatch_lock_last_read_success_timestamp_seconds"); v != good {
		t.Errorf("timestamp after a failed read = %s, want the last success %s", v, good)
	}
	if st := h.status("x"); !st.Diff.Locked {
		t.Errorf("the last good lock is no longer in force")
	}

	writeFile(t, dir, "mcp-tools.lock.json", `{"x": ["a", "b"]}`)
	waitFor(t, "the lock fixed again", func() bool { return sample("mcpwatch_lock_last_read_successful") == "1" })
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed lock to be seen", func() bool { return sample("mcpwatch_lock_last_read_successful") == "0" })
}

package lockstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write goes through atomicfile (its own tests cover the failures): the lock
// reads back as written, and an error calls the file a lock file.
func TestWriteReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	l := New()
	l.Set("report", NewEntry([]Observed{{Name: "fetch_daily_report"}, {Name: "list_report_dates"}}, false))
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Marshal()) != string(l.Marshal()) {
		t.Errorf("read back %q, wrote %q", got.Marshal(), l.Marshal())
	}
	missing := filepath.Join(t.TempDir(), "missing", "mcp-tools.lock.json")
	if err := Write(missing, l); err == nil || !strings.Contains(err.Error(), "lock file "+missing) {
		t.Errorf("Write into a missing directory = %v, want an error naming the lock file", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a lock appeared in a missing directory")
	}
}

package lockstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// A lock path that names a named pipe, a device or a file past the limit
// is an error naming the file and what is wrong; a pipe never blocks.
func TestReadIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.lock.json")
	testtool.Mkfifo(t, fifo)
	huge := filepath.Join(dir, "huge.lock.json")
	if err := os.WriteFile(huge, nil, 0o600); err != nil || os.Truncate(huge, 64<<20+1) != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "read lock file: open " + fifo + ": a named pipe (FIFO), not a regular file",
		"/dev/zero": "read lock file: open /dev/zero: a device, not a regular file",
		huge:        "read lock file: read " + huge + ": larger than the limit of 64 MiB",
	} {
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s) = %v, want %q", path, err, want)
		}
	}
}

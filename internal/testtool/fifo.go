package testtool

import (
	"os"
	"syscall"
	"testing"
)

// Mkfifo makes a named pipe at path, the file that blocks a reader's open
// until a writer comes, or skips the test where the system has none. At
// cleanup it opens the pipe for writing once, so that a reader stuck in its
// open (the bug such a test looks for) is let go rather than leaked.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil { //nolint:gosec // the test's own pipe
			_ = f.Close()
		}
	})
}

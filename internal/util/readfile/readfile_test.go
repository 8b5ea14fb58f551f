package readfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(small, 6); err != nil || string(b) != "token\n" {
		t.Errorf("a file at its limit: %q, %v", b, err)
	}
	_, err := Read(small, 5)
	if !errors.Is(err, ErrTooLarge) || err.Error() != "read "+small+": larger than the limit of 5 bytes" {
		t.Errorf("a file past its limit: %v", err)
	}
	// A file whose size says it is too large is refused before a byte is
	// read; one whose size says nothing (a /proc file is of size 0) is
	// refused after limit+1 bytes.
	if _, err := os.Stat("/proc/self/status"); err == nil {
		if _, err := Read("/proc/self/status", 16); !errors.Is(err, ErrTooLarge) {
			t.Errorf("/proc/self/status against 16 bytes: %v", err)
		}
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil || os.Truncate(big, 2<<20) != nil {
		t.Fatal(err)
	}
	if _, err := Read(big, 1<<20); !errors.Is(err, ErrTooLarge) || !strings.HasSuffix(err.Error(), "larger than the limit of 1 MiB") {
		t.Errorf("2 MiB against 1 MiB: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "absent"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// A named pipe, a device or a directory is refused at once: a plain open
// of a pipe without a writer blocks for ever, and /dev/zero never ends.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	testtool.Mkfifo(t, fifo)
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO)", "/dev/zero": "a device", dir: "a directory"} {
		_, err := Read(path, 1<<20)
		if !errors.Is(err, ErrNotRegular) || err.Error() != "open "+path+": "+kind+", not a regular file" {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// A read that does not end within Timeout fails, and so does every read
// of the same file until it has ended; then the file reads again.
func TestReadStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		real := read
		read = func(path string, limit int64, _ func(fs.FileInfo) error) ([]byte, error) {
			<-release
			return []byte("late"), nil
		}
		defer func() { read = real }()

		if _, err := Read("/mnt/hung/token", 10); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "no answer within 10s") {
			t.Fatalf("a stalled read: %v", err)
		}
		if _, err := Read("/mnt/hung/token", 10); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "an earlier read of it has not ended yet") {
			t.Fatalf("a read while the first is stuck: %v", err)
		}
		close(release)
		synctest.Wait()
		if b, err := Read("/mnt/hung/token", 10); err != nil || string(b) != "late" {
			t.Fatalf("once the first read ended: %q, %v", b, err)
		}
	})
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 8 << 20: "8 MiB", 512 << 10: "512 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// ReadPrivate refuses a file others may write, as ssh does; the user's own
// 0600 file is read. (Another user's file needs a second user to test:
// the uid check is the same comparison.)
func TestReadPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "client.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadPrivate(path, 10); err != nil || string(b) != "{}" {
		t.Fatalf("ReadPrivate of a 0600 file: %q, %v", b, err)
	}
	for _, mode := range []os.FileMode{0o620, 0o602, 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPrivate(path, 10)
		if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "writable by others") {
			t.Errorf("mode %04o: %v, want ErrNotPrivate", mode, err)
		}
		if _, err := Read(path, 10); err != nil {
			t.Errorf("Read of mode %04o: %v", mode, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := ReadPrivate(fifo, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO: %v, want ErrNotRegular", err)
	}
}

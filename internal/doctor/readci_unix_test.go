//go:build unix

package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func examineOpts(dir string) Options {
	return Options{Dir: dir, Getenv: func(string) string { return "" },
		ParseCheck: func([]string) (CheckFlags, error) { return CheckFlags{}, nil },
		Git:        func(...string) ([]byte, error) { return nil, nil }}
}

// Workflows are anyone's to write: one that is a symlink to /dev/zero, one
// that is a named pipe no one writes to, are each a finding, not a read
// that never ends; and a 2 MB line is not echoed whole.
func TestReadCIBounded(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(wf, "zero.yml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(wf, "fifo.yml"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := "on: push\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: mcpwatch check --config.file " + strings.Repeat("\x1b", 2<<20) + "\n"
	if err := os.WriteFile(filepath.Join(wf, "long.yml"), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := Examine(examineOpts(dir))
	unreadable := map[string]bool{}
	for _, f := range rep.Findings {
		if strings.Contains(f.Problem, "cannot be read") {
			unreadable[f.File] = true
		}
		if n := len(f.Problem) + len(f.Fix); n > 4*maxEchoBytes+64 {
			t.Errorf("a finding of %d bytes echoes the file: %.80q", n, f.Problem)
		}
	}
	for _, name := range []string{".github/workflows/zero.yml", ".github/workflows/fifo.yml"} {
		if !unreadable[name] {
			t.Errorf("%s: no finding that it cannot be read; findings: %v", name, rep.Findings)
		}
	}
}

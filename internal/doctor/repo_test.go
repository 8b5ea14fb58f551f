package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A checkout whose .git/config names an fsmonitor program (a cloned
// repository's own configuration): doctor lists the tracked files without
// running it.
func TestTrackedFilesRunsNoRepositoryProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte("servers: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("add", "mcpwatch.yml")
	hook := filepath.Join(dir, "monitor.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	run("config", "core.fsmonitor", hook)

	d := &doctor{opts: Options{Dir: dir}}
	tracked, err := d.trackedFiles()
	if err != nil {
		t.Fatal(err)
	}
	if !tracked["mcpwatch.yml"] {
		t.Errorf("tracked %v, want mcpwatch.yml", tracked)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("git ls-files ran the repository's core.fsmonitor program")
	}
}

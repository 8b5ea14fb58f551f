package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcpwatch serve killed with SIGKILL (no chance to clean up) leaves no
// server process behind: the kernel kills each spawned server as its
// parent dies. The server tells its pid through a FIFO (opening it blocks
// until the test reads), and its end is seen through a pidfd: no sleep.
func TestServeKilledLeavesNoServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "server.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "timeout": "10m"},
		"servers": map[string]any{"stuck": map[string]any{
			// Pinned to the legacy era: one process, which never answers
			// initialize, so the probe is still waiting when mcpwatch dies ($$ is
			// a literal $ in the configuration).
			"command": "/bin/sh", "args": []string{"-c", `echo $$$$ > "$0"; exec sleep 600`, fifo}, "era": "legacy",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcpwatch.yml")
	if err := os.WriteFile(cfg, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcpwatchBin, "serve", "-c", cfg, "--web.listen-address", "127.0.0.1:0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	pids := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the server opens it to write
		if err != nil {
			pids <- ""
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		pids <- strings.TrimSpace(line)
	}()
	var pid int
	select {
	case s := <-pids:
		if pid, err = strconv.Atoi(s); err != nil {
			t.Fatalf("the server wrote %q, not its pid", s)
		}
	case <-time.After(time.Minute): // generous: the first probe starts within 5 s
		t.Fatal("the server was never spawned")
	}
	pidfd, err := pidfdOpen(pid)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer syscall.Close(pidfd)

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	// Generous: the kernel kills the server as mcpwatch dies; without the
	// parent-death signal it would sleep on for 10 minutes.
	if !waitPidfd(t, pidfd, 30*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("server %d still runs after mcpwatch serve was killed", pid)
	}
}

// pidfdOpen returns a pidfd of pid (Linux 5.3 and later): it becomes
// readable when the process ends, whoever its parent is.
func pidfdOpen(pid int) (int, error) {
	const sysPidfdOpen = 434 // the same number on every Linux architecture
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// waitPidfd waits up to max for the process of pidfd to end.
func waitPidfd(t *testing.T, pidfd int, max time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(max)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		var set syscall.FdSet
		set.Bits[pidfd/64] |= 1 << (uint(pidfd) % 64)
		tv := syscall.NsecToTimeval(left.Nanoseconds())
		n, err := syscall.Select(pidfd+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("select on the pidfd: %v", err)
		}
		return n > 0
	}
}

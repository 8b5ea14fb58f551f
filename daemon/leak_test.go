package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// markedProcesses lists the live processes whose environment holds
// marker: every stdio server a test started, and their children.
func markedProcesses(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(marker)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(stat) {
			continue // exited; its parent has yet to reap it, and it holds nothing
		}
		pids = append(pids, pid)
	}
	return pids
}

func isZombie(stat []byte) bool {
	// The state follows the parenthesized command name, which may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func openFiles(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

func newMarker() string { return "mcpwatch-leak-" + rand.Text() }

// 500 probes of stdio servers in a row, each a process of its own (fresh
// mode), leave no process behind, and the daemon's goroutines and open
// files stay flat.
func TestManyStdioProbesLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("500 process spawns")
	}
	marker := newMarker()
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	// A plain build of the kit's test server starts in a few milliseconds,
	// where this race-instrumented test binary takes ten times as long.
	server := buildTestServer(t, dir)
	servers := map[string]any{}
	for i := range 4 {
		servers["report-"+strconv.Itoa(i)] = map[string]any{"command": server, "env": map[string]string{"LEAK_MARKER": marker}}
	}
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1ms", "concurrency": 4, "stdio_concurrency": 4, "stdio_mode": "fresh"},
		"servers":  servers,
	})
	h := start(t, path, Options{})
	total := func() uint64 {
		var n uint64
		for _, st := range h.d.Statuses() {
			n += st.Probes
		}
		return n
	}

	waitFor(t, "50 probes", func() bool { return total() >= 50 })
	goroutines, files := runtime.NumGoroutine(), openFiles(t)
	// 500 spawns take seconds on an idle machine and minutes on a loaded
	// one: only the bound fails the test, so it is generous.
	waitForWithin(t, "500 probes", 5*time.Minute, func() bool { return total() >= 500 })
	goroutinesAfter, filesAfter := runtime.NumGoroutine(), openFiles(t)

	for _, st := range h.d.Statuses() {
		if st.Last == nil || !st.Last.OK || len(st.Failures) > 0 {
			t.Errorf("server %s: last %+v, failures %v", st.Name, st.Last, st.Failures)
		}
	}
	// A probe may be between spawn and reap at either sample: allow for the
	// four that can run at once, and their pipes.
	if goroutinesAfter > goroutines+4*8 {
		t.Errorf("goroutines grew from %d to %d over 450 probes", goroutines, goroutinesAfter)
	}
	if err := h.d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Counted again once no probe runs: a probe in flight at a sample holds
	// its pipes (and, while it spawns, both ends of them), so samples taken
	// while probing differ by up to a few dozen with the timing. With no
	// probe in flight, anything above the first sample is a leak, and a
	// leak of even one descriptor in ten probes is 45 over 450.
	filesClosed := openFiles(t)
	if filesClosed > files {
		t.Errorf("open files grew from %d (probing) to %d (closed, no probe in flight) over 450 probes", files, filesClosed)
	}
	if pids := markedProcesses(t, marker); len(pids) > 0 {
		t.Errorf("processes left behind after %d probes: %v", total(), pids)
	}
	t.Logf("%d probes; goroutines %d -> %d; open files %d -> %d while probing, %d closed", total(), goroutines, goroutinesAfter, files, filesAfter, filesClosed)
}

// buildTestServer builds internal/tools/mcpwatch-testserver into dir.
func buildTestServer(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // SA1019: only when go is not on PATH; a test binary runs where it was built
	}
	out := filepath.Join(dir, "mcpwatch-testserver")
	cmd := exec.Command(goTool, "build", "-o", out, "github.com/mcpwatch/mcpwatch/internal/tools/mcpwatch-testserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the test server: %v\n%s", err, msg)
	}
	return out
}

// Close cancels running probes, which kills their whole process group (a
// server that ignores SIGTERM and has spawned a grandchild included), and
// returns within its bound: Close says when it ran out (an error), so the
// bound can be generous, 30 s, and still far below the stuck probe's 60 s
// timeout that a Close without the kill would wait for.
func TestCloseKillsRunningProbes(t *testing.T) {
	marker := newMarker()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "timeout": "60s"},
		"servers": map[string]any{
			"stuck": stdioServer(probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile},
				map[string]string{"LEAK_MARKER": marker}),
		},
	})
	h := start(t, path, Options{ShutdownTimeout: 30 * time.Second})
	waitFor(t, "the grandchild to start", func() bool {
		_, err := os.Stat(pidFile)
		return err == nil && len(markedProcesses(t, marker)) >= 2
	})

	began := time.Now()
	if err := h.d.Close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}
	took := time.Since(began)
	if pids := markedProcesses(t, marker); len(pids) > 0 {
		t.Errorf("processes left behind after close: %v", pids)
	}
	// A canceled probe is not the server's failure: nothing was recorded.
	if st := h.d.Statuses()[0]; st.Last != nil || len(st.Failures) > 0 {
		t.Errorf("a probe canceled by shutdown was recorded: %+v", st.Last)
	}
	t.Logf("close with a stuck probe took %s", took)
}

// Serve answers over a real listener until its context ends, then shuts
// everything down and returns nil.
func TestServeStopsOnCancel(t *testing.T) {
	marker := newMarker()
	dir := t.TempDir()
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers": map[string]any{
			"report": stdioServer(probetest.Config{}, map[string]string{"LEAK_MARKER": marker}),
			"stuck":  stdioServer(probetest.Config{Behavior: probetest.StallToolsList}, map[string]string{"LEAK_MARKER": marker}),
		},
	})
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg, Options{FirstRoundSpread: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.Start()
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, []net.Listener{l}, nil) }()

	url := "http://" + l.Addr().String()
	waitFor(t, "a probe of report", func() bool {
		resp, err := http.Get(url + "/api/v1/servers/report")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return strings.Contains(b.String(), `"state": "ok"`)
	})

	began := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
	case <-time.After(time.Minute): // only the bound fails the test: a loaded machine is slow to reap
		t.Fatal("Serve did not return after its context ended")
	}
	t.Logf("shutdown with a stalled probe took %s", time.Since(began))
	if _, err := http.Get(url + "/-/healthy"); err == nil {
		t.Errorf("HTTP still answers after Serve returned")
	}
	if pids := markedProcesses(t, marker); len(pids) > 0 {
		t.Errorf("processes left behind: %v", pids)
	}
}

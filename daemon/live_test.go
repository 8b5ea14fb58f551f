package daemon

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A stdio server of the kit whose state file the test changes while it
// runs (probetest.Config.StateFile), logging each process it starts.
type liveServerFiles struct{ state, spawns string }

func newLiveServerFiles(t *testing.T, dir, name string) liveServerFiles {
	t.Helper()
	f := liveServerFiles{state: filepath.Join(dir, name+".state"), spawns: filepath.Join(dir, name+".spawns")}
	writeFile(t, dir, name+".state", "\n")
	return f
}

func (f liveServerFiles) config(env map[string]string) map[string]any {
	return stdioServer(probetest.Config{StateFile: f.state, SpawnLog: f.spawns}, env)
}

func (f liveServerFiles) pids(t *testing.T) []int {
	t.Helper()
	raw, err := os.ReadFile(f.spawns)
	if err != nil {
		return nil
	}
	var out []int
	for _, l := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(l); err == nil && pid > 1 {
			out = append(out, pid)
		}
	}
	return out
}

func toolsOf(a apiServer) string { return strings.Join(a.Tools, ",") }

// In live mode the daemon keeps a stdio server running: a tool it stops
// listing is seen by the next scheduled probe of the same process, and a
// change it announces is probed at once, with an hourly schedule.
func TestLiveServerToolRemovedSeen(t *testing.T) {
	dir := t.TempDir()
	scheduled, announcing := newLiveServerFiles(t, dir, "scheduled"), newLiveServerFiles(t, dir, "announcing")
	scheduledCfg := scheduled.config(nil)
	scheduledCfg["schedule"] = "@every 100ms"
	path := writeConfig(t, dir, map[string]any{
		// restart_every: no start but the first, however long the test takes.
		"defaults": map[string]any{"schedule": "@every 1h", "restart_every": "1h"},
		"servers":  map[string]any{"scheduled": scheduledCfg, "announcing": announcing.config(nil)},
	})
	h := start(t, path, Options{})
	both := "fetch_daily_report,list_report_dates"
	for _, name := range []string{"scheduled", "announcing"} {
		waitFor(t, name+" probed, live", func() bool {
			a := h.status(name)
			return toolsOf(a) == both && a.Stdio != nil && a.Stdio.Mode == config.StdioLive
		})
	}

	writeFile(t, dir, "scheduled.state", probetest.StateRemove+"fetch_daily_report\n")
	waitFor(t, "the removed tool seen by a scheduled probe", func() bool { return toolsOf(h.status("scheduled")) == "list_report_dates" })
	if a := h.status("scheduled"); a.Stdio.Starts != 1 || len(scheduled.pids(t)) != 1 {
		t.Errorf("scheduled: %d starts, %d processes, want 1: the same process probed", a.Stdio.Starts, len(scheduled.pids(t)))
	}

	writeFile(t, dir, "announcing.state", probetest.StateRemove+"list_report_dates\n")
	if err := syscall.Kill(announcing.pids(t)[0], syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the announced change probed at once", func() bool { return toolsOf(h.status("announcing")) == "fetch_daily_report" })
	a := h.status("announcing")
	if a.Probes != 2 || a.Stdio.Starts != 1 || len(announcing.pids(t)) != 1 {
		t.Errorf("announcing: %d probes, %d starts, %d processes; want 2 probes of one process", a.Probes, a.Stdio.Starts, len(announcing.pids(t)))
	}
	if a.History[0].Trigger != triggerChange {
		t.Errorf("the last probe's trigger %q, want %q", a.History[0].Trigger, triggerChange)
	}
}

// A rotated ${file:...} secret in a live server's environment starts it
// again with the new value; no value reaches the API or the page.
func TestLiveServerRotatedSecretStartsAgain(t *testing.T) {
	dir := t.TempDir()
	files := newLiveServerFiles(t, dir, "report")
	writeFile(t, dir, "token", "first-secret-value-0001\n")
	srv := files.config(map[string]string{"REPORT_API_TOKEN": "${file:token}"})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 100ms", "restart_every": "1h"},
		"servers":  map[string]any{"report": srv},
	})
	h := start(t, path, Options{})
	waitFor(t, "two probes of one live process", func() bool {
		a := h.status("report")
		return a.Probes >= 2 && a.Stdio != nil && a.Stdio.Mode == config.StdioLive
	})
	if n := len(files.pids(t)); n != 1 {
		t.Fatalf("%d processes for the first probes, want 1", n)
	}

	writeFile(t, dir, "token", "second-secret-value-0002\n")
	waitFor(t, "the server started again with the rotated secret", func() bool {
		a := h.status("report")
		return a.Stdio.Starts == 2 && a.Stdio.StartReason == probe.StartChanged
	})
	if n := len(files.pids(t)); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
	_, api := h.get("/api/v1/servers/report")
	_, page := h.get("/server/report")
	for _, secret := range []string{"first-secret-value-0001", "second-secret-value-0002"} {
		if strings.Contains(api+page, secret) {
			t.Errorf("the secret %q is on the API or the page", secret)
		}
	}
	if !strings.Contains(page, "what it is started with changed") {
		t.Errorf("the page does not say why the server was started again")
	}
}

// live_sessions caps the servers kept running: past it, a server is
// probed with a process of its own, and a server leaving the
// configuration takes its process with it.
func TestLiveSessionsCap(t *testing.T) {
	marker := newMarker()
	dir := t.TempDir()
	servers := map[string]any{}
	for _, name := range []string{"a", "b", "c"} {
		servers[name] = newLiveServerFiles(t, dir, name).config(map[string]string{"LEAK_MARKER": marker})
	}
	doc := map[string]any{
		"defaults": map[string]any{"schedule": "@every 1s", "live_sessions": 2},
		"servers":  servers,
	}
	path := writeConfig(t, dir, doc)
	h := start(t, path, Options{})
	live := func() (n int) {
		for _, name := range []string{"a", "b", "c"} {
			if a := h.status(name); a.Stdio != nil && a.Stdio.Mode == config.StdioLive {
				n++
			}
		}
		return n
	}
	waitFor(t, "every server probed three times", func() bool {
		return h.status("a").Probes >= 3 && h.status("b").Probes >= 3 && h.status("c").Probes >= 3
	})
	if n := live(); n != 2 {
		t.Errorf("%d servers live, want 2 (live_sessions)", n)
	}

	delete(servers, "a")
	delete(servers, "b")
	writeConfig(t, dir, doc)
	if err := h.d.Reload(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed servers' processes gone, c's running", func() bool {
		return len(markedProcesses(t, marker)) == 1 && h.status("c").Stdio.Mode == config.StdioLive
	})
}

// A live server whose key is revoked serves on; its next start, at
// restart_every, exits at start, and that probe fails with its words.
func TestLiveServerRevokedKeySeenAtRestartEvery(t *testing.T) {
	dir := t.TempDir()
	files := newLiveServerFiles(t, dir, "report")
	srv := files.config(nil)
	srv["restart_every"] = "1s"
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 100ms"},
		"servers":  map[string]any{"report": srv},
	})
	h := start(t, path, Options{})
	waitFor(t, "a live probe", func() bool {
		a := h.status("report")
		return a.OK && a.Stdio != nil && a.Stdio.Mode == config.StdioLive
	})
	writeFile(t, dir, "report.state", probetest.StateExitAtStart+"\n")
	a := h.waitState("report", "failed")
	if a.Reason != probe.ReasonExited || a.Stdio.StartReason != probe.StartRenewed || a.Stdio.Mode != config.StdioFresh {
		t.Errorf("after restart_every: reason %q, stdio %+v; want exited, started for restart_every, not running", a.Reason, a.Stdio)
	}
	if !strings.Contains(a.StderrTail, probetest.StateRevokedLine) {
		t.Errorf("stderr %q, want the server's words", a.StderrTail)
	}
}

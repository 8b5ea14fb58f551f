package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// liveServer is a probetest server whose state file a test changes while
// it runs, with a log of the processes started.
type liveServer struct {
	state, spawnLog, pidFile string
	target                   probe.Target
}

func newLiveServer(t *testing.T, era probetest.Era, grandchild bool) *liveServer {
	t.Helper()
	dir := t.TempDir()
	s := &liveServer{state: filepath.Join(dir, "state"), spawnLog: filepath.Join(dir, "spawns")}
	cfg := probetest.Config{Era: era, StateFile: s.state, SpawnLog: s.spawnLog}
	if grandchild {
		s.pidFile = filepath.Join(dir, "grandchild.pid")
		cfg.PIDFile = s.pidFile
		killPIDFile(t, s.pidFile)
	}
	s.setState(t)
	s.target = stdioTarget(cfg, nil)
	return s
}

func (s *liveServer) setState(t *testing.T, lines ...string) {
	t.Helper()
	if err := os.WriteFile(s.state, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// pids are the processes started so far, in order.
func (s *liveServer) pids(t *testing.T) []int {
	t.Helper()
	raw, err := os.ReadFile(s.spawnLog)
	if err != nil {
		t.Fatalf("spawn log: %v", err)
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("spawn log: %q", raw)
		}
		out = append(out, pid)
	}
	return out
}

func liveRun(t *testing.T, l *probe.Live, target probe.Target, timeout, restartEvery time.Duration) *probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := l.Run(ctx, target, probe.Options{}, restartEvery)
	if res.OK == (res.Reason != "") {
		t.Fatalf("OK %v with reason %q", res.OK, res.Reason)
	}
	return res
}

func wantTools(t *testing.T, res *probe.Result, want ...string) {
	t.Helper()
	if !res.OK {
		t.Fatalf("probe failed: %s: %s (stderr %q)", res.Reason, res.Error, res.StderrTail)
	}
	if got := strings.Join(res.ToolNames(), ","); got != strings.Join(want, ",") {
		t.Errorf("tools %s, want %s", got, strings.Join(want, ","))
	}
}

// A server kept running: the second probe is tools/list on the same
// process, and a tool the server no longer lists is seen by it, in both
// eras.
func TestLiveToolRemovedSeenByNextProbe(t *testing.T) {
	t.Parallel()
	for _, era := range []probetest.Era{probetest.EraLegacy, probetest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			s := newLiveServer(t, era, false)
			l := probe.NewLive(nil)
			defer l.Close()
			first := liveRun(t, l, s.target, time.Minute, 0)
			wantTools(t, first, "fetch_daily_report", "list_report_dates")
			if first.Session == nil || first.Session.Start != probe.StartFirst || !first.Session.Kept {
				t.Fatalf("first probe's session %+v, want started (first) and kept", first.Session)
			}

			s.setState(t, "-fetch_daily_report")
			second := liveRun(t, l, s.target, time.Minute, 0)
			wantTools(t, second, "list_report_dates")
			if second.Session == nil || second.Session.Start != "" || !second.Session.Kept || !second.Session.Started.Equal(first.Session.Started) {
				t.Errorf("second probe's session %+v, want the first one's server, kept", second.Session)
			}
			if second.Era != first.Era || second.ProtocolVersion != first.ProtocolVersion || second.ServerName != first.ServerName {
				t.Errorf("second probe says era %q %q server %q, the first %q %q %q", second.Era, second.ProtocolVersion, second.ServerName,
					first.Era, first.ProtocolVersion, first.ServerName)
			}
			if n := len(s.pids(t)); n != 1 {
				t.Errorf("%d processes started for two probes, want 1", n)
			}
		})
	}
}

// A change the running server announces between probes reaches the Live's
// listener at once, without a probe.
func TestLiveHearsListChanged(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, false)
	heard := make(chan struct{}, 10)
	l := probe.NewLive(func() { heard <- struct{}{} })
	defer l.Close()
	wantTools(t, liveRun(t, l, s.target, time.Minute, 0), "fetch_daily_report", "list_report_dates")

	s.setState(t, "-list_report_dates")
	if err := syscall.Kill(s.pids(t)[0], syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard:
	case <-time.After(time.Minute):
		t.Fatal("no change heard within a minute of the server announcing it")
	}
	wantTools(t, liveRun(t, l, s.target, time.Minute, 0), "fetch_daily_report")
}

// A live server that hangs is killed at the probe's deadline with its
// whole process group (its grandchild too), and the next probe starts it
// afresh.
func TestLiveHungServerKilledAndStartedAgain(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, true)
	l := probe.NewLive(nil)
	defer l.Close()
	wantTools(t, liveRun(t, l, s.target, time.Minute, 0), "fetch_daily_report", "list_report_dates")
	grandchild := waitGrandchild(t, s.pidFile)
	leader := s.pids(t)[0]

	s.setState(t, probetest.StateHang)
	const deadline = time.Second
	start := time.Now()
	hung := liveRun(t, l, s.target, deadline, 0)
	elapsed := time.Since(start)
	if hung.Reason != probe.ReasonTimeout {
		t.Fatalf("a hung server's probe: reason %q (%s), want timeout", hung.Reason, hung.Error)
	}
	if elapsed < deadline || elapsed > probe.ReturnedBy(deadline) {
		t.Errorf("returned after %s, the deadline was %s", elapsed.Round(time.Millisecond), deadline)
	}
	if hung.Session == nil || hung.Session.Kept {
		t.Errorf("the hung probe's session %+v, want it not kept", hung.Session)
	}
	assertGone(t, leader)
	assertGone(t, grandchild)

	s.setState(t)
	again := liveRun(t, l, s.target, time.Minute, 0)
	wantTools(t, again, "fetch_daily_report", "list_report_dates")
	if again.Session == nil || again.Session.Start != probe.StartFailed || !again.Session.Kept {
		t.Errorf("the probe after: session %+v, want started again (failed) and kept", again.Session)
	}
	if n := len(s.pids(t)); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

// A server whose key is revoked keeps serving while it runs; started
// again once it has run for restart_every, it exits at start, and that
// probe fails with its words.
func TestLiveRevokedKeySeenWithinRestartEvery(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, false)
	l := probe.NewLive(nil)
	defer l.Close()
	now := time.Now()
	l.SetClock(func() time.Time { return now })
	const restartEvery = 5 * time.Minute
	wantTools(t, liveRun(t, l, s.target, time.Minute, restartEvery), "fetch_daily_report", "list_report_dates")

	s.setState(t, probetest.StateExitAtStart) // the key revoked: it would not start now
	now = now.Add(restartEvery - time.Second)
	still := liveRun(t, l, s.target, time.Minute, restartEvery)
	wantTools(t, still, "fetch_daily_report", "list_report_dates")
	if still.Session == nil || still.Session.Start != "" {
		t.Errorf("before restart_every: session %+v, want the running server", still.Session)
	}

	now = now.Add(time.Second)
	renewed := liveRun(t, l, s.target, time.Minute, restartEvery)
	if renewed.OK || renewed.Reason != probe.ReasonExited {
		t.Fatalf("at restart_every: OK %v, reason %q (%s), want exited", renewed.OK, renewed.Reason, renewed.Error)
	}
	if !strings.Contains(renewed.StderrTail, probetest.StateRevokedLine) {
		t.Errorf("stderr %q, want the server's words %q", renewed.StderrTail, probetest.StateRevokedLine)
	}
	if renewed.Session == nil || renewed.Session.Start != probe.StartRenewed || renewed.Session.Kept {
		t.Errorf("session %+v, want started for restart_every, not kept", renewed.Session)
	}
	if n := len(s.pids(t)); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

// What the server was started with changes (a rotated secret in its
// environment): the next probe starts it again with the new one.
func TestLiveChangedTargetStartsAgain(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, false)
	l := probe.NewLive(nil)
	defer l.Close()
	target := s.target
	target.Env["API_TOKEN"] = "first"
	wantTools(t, liveRun(t, l, target, time.Minute, 0), "fetch_daily_report", "list_report_dates")
	same := liveRun(t, l, target, time.Minute, 0)
	if same.Session == nil || same.Session.Start != "" {
		t.Errorf("the same target: session %+v, want the running server", same.Session)
	}

	rotated := target
	rotated.Env = map[string]string{}
	for k, v := range target.Env {
		rotated.Env[k] = v
	}
	rotated.Env["API_TOKEN"] = "second"
	res := liveRun(t, l, rotated, time.Minute, 0)
	wantTools(t, res, "fetch_daily_report", "list_report_dates")
	if res.Session == nil || res.Session.Start != probe.StartChanged {
		t.Errorf("a changed environment: session %+v, want started again (changed)", res.Session)
	}
	if n := len(s.pids(t)); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
}

// What a server wrote on stderr as it started stays in every probe of it
// (a rejection it logs and then serves on), however much it logs after.
func TestLiveKeepsStderrOfItsStart(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, false)
	const said = "warning: the API key was rejected (401); serving cached tools"
	s.setState(t, probetest.StateLogAtStart+said)
	l := probe.NewLive(nil)
	defer l.Close()
	for i := range 3 {
		res := liveRun(t, l, s.target, time.Minute, 0)
		wantTools(t, res, "fetch_daily_report", "list_report_dates")
		if !strings.Contains(res.StderrTail, said) {
			t.Errorf("probe %d: stderr %q lacks what the server said at start", i+1, res.StderrTail)
		}
	}
}

// Close ends the server with its group; nothing of it runs after.
func TestLiveClose(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t, probetest.EraLegacy, true)
	l := probe.NewLive(nil)
	wantTools(t, liveRun(t, l, s.target, time.Minute, 0), "fetch_daily_report", "list_report_dates")
	grandchild := waitGrandchild(t, s.pidFile)
	if l.Started().IsZero() {
		t.Error("Started is zero while the server runs")
	}
	l.Close()
	if !l.Started().IsZero() {
		t.Error("Started is set after Close")
	}
	assertGone(t, s.pids(t)[0])
	assertGone(t, grandchild)
}

// waitGrandchild waits for the server's grandchild to write its pid (it
// does so on its own, after the server answered), for at most a minute.
func waitGrandchild(t *testing.T, pidFile string) int {
	t.Helper()
	for range 6000 {
		if pid, ok := grandchildPID(t, pidFile); ok {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server's grandchild wrote no pid within a minute")
	return 0
}

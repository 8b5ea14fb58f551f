package probe_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The deadline holds against servers that make tearing a probe down hard:
// a process outside the server's process group holds a pipe, the leader
// leaves its own group, a session that will not end.

// killPIDFile kills the process whose pid a test server wrote, when the
// test ends: one that left the process group is not the probe's to kill.
func killPIDFile(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		raw, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// A server that stops reading stdin while a process outside its group holds
// the pipe: the probe's next request (a 1 MiB cursor sent back) cannot be
// written, and killing the group does not release the write. Run still
// returns at the deadline. The write blocks only once the server has sent
// its first page: on a loaded machine, where the shell can take longer than
// the deadline to get there, the deadline is doubled until it does
// (probetest.UpWithin), each deadline held.
func TestStdioBlockedWriteEndsAtDeadline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `
read -r line
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh"}}}'
read -r line
read -r line
exec 3<&0
setsid sleep 120 <&3 >/dev/null 2>&1 3<&- &
echo $! >"$PIDFILE"
printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"%s"}}\n' "$(head -c 1048576 /dev/zero | tr '\0' x)"
exec sleep 120
`
	last, up := probetest.UpWithin(2*time.Second, func(deadline time.Duration) bool {
		pidFile := filepath.Join(dir, "holder-"+deadline.String()+".pid")
		killPIDFile(t, pidFile)
		target := probe.Target{Command: "/bin/sh", Args: []string{"-c", script}, Env: map[string]string{"PIDFILE": pidFile}, Era: probe.EraLegacy}
		start := time.Now()
		res := runProbe(t, target, deadline, probe.Options{})
		elapsed := time.Since(start)
		if res.Reason != probe.ReasonTimeout {
			t.Errorf("reason %q (%s), want timeout", res.Reason, res.Error)
		}
		// Generous for a loaded machine, far below the holder's 120 s.
		if elapsed > probe.ReturnedBy(deadline) {
			t.Errorf("returned after %s, the deadline was %s", elapsed.Round(time.Millisecond), deadline)
		}
		if res.Pages == 0 {
			t.Logf("no page read by the %s deadline (%s): the server was slow to get there", deadline, res.Error)
			return false
		}
		if res.Pages != 1 {
			t.Errorf("%d pages read, want the first one", res.Pages)
		}
		return true
	})
	if !up {
		t.Fatalf("the server sent no page even with a %s deadline", last)
	}
}

// A server whose leader moves itself out of the process group it was
// started in (here into the test's own group) is still killed and reaped:
// Run returns at the deadline, not when the server chooses to exit.
func TestStdioLeaderLeavingItsGroupIsKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "leader.pid")
	killPIDFile(t, pidFile)
	script := `$SIG{TERM} = "IGNORE";
open(my $f, ">", $ENV{PIDFILE}) or die "pid file: $!"; print $f "$$\n"; close($f);
setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!";
alarm 120; sleep 150;`
	target := probe.Target{Command: "perl", Args: []string{"-e", script}, Env: map[string]string{"PIDFILE": pidFile}, Era: probe.EraLegacy}
	const deadline = time.Second
	start := time.Now()
	res := runProbe(t, target, deadline, probe.Options{})
	elapsed := time.Since(start)
	if res.Reason != probe.ReasonTimeout {
		t.Errorf("reason %q (%s; stderr %q), want timeout", res.Reason, res.Error, res.StderrTail)
	}
	// Generous for a loaded machine, far below the server's 120 s.
	if elapsed > probe.ReturnedBy(deadline) {
		t.Errorf("returned after %s, the deadline was %s", elapsed.Round(time.Millisecond), deadline)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the server wrote no pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err := syscall.Kill(pid, 0); err == nil && processState(pid) != "Z" {
		t.Errorf("server %d is still alive after the probe (state %q)", pid, processState(pid))
	}
}

// Ending a legacy HTTP session with DELETE has a short bound of its own: a
// server that never answers it does not hold a probe that has its tools
// until the deadline.
func TestHTTPSessionEndIsBounded(t *testing.T) {
	t.Parallel()
	kit := probetest.NewServer(probetest.Config{Era: probetest.EraLegacy})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			<-r.Context().Done()
			return
		}
		kit.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(kit.Close)

	// The warning below is only written when the DELETE's own short bound
	// ran out before the probe's deadline; the wall time then says the
	// probe did not wait for the deadline either, with room for a loaded
	// machine.
	const deadline = time.Minute
	start := time.Now()
	res := runProbe(t, probe.Target{URL: srv.URL + "/mcp"}, deadline, probe.Options{})
	elapsed := time.Since(start)
	if !res.OK || len(res.Tools) != 2 {
		t.Fatalf("ok %v (%s), %d tools", res.OK, res.Error, len(res.Tools))
	}
	if elapsed > deadline/3 {
		t.Errorf("returned after %s: the unanswered DELETE held the probe", elapsed.Round(time.Millisecond))
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "DELETE") }) {
		t.Errorf("warnings %q do not mention the unanswered DELETE", res.Warnings)
	}
}

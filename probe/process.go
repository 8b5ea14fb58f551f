package probe

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The process of a stdio server: spawned in a group of its own, with a
// minimal environment and (on Linux) a parent-death signal, and known dead
// only when no process of the group runs any more.

// minimalEnv are the variables a stdio server inherits from mcpwatch unless
// the target inherits everything; LC_* are passed too.
var minimalEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR"}

// spawn starts a stdio server's command in a process group of its own,
// with the minimal environment plus its own, and returns our ends of its
// three pipes.
func spawn(t Target) (cmd *exec.Cmd, stdin, stdout, stderr *os.File, err error) {
	if t.Dir != "" {
		// exec reports a bad directory as the command not being found.
		if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
			return nil, nil, nil, nil, failf(ReasonSpawnFailed, "start %q: working directory %s is not a directory", t.Command, t.Dir)
		}
	}
	// Pipes of our own rather than exec's: exec closes its pipes in Wait,
	// and the reaper calls Wait as soon as the process exits, while the
	// reader may still be draining what the server wrote before dying.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err1 := pipe()
	stdoutR, stdoutW, err2 := pipe()
	stderrR, stderrW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, nil, nil, nil, failf(ReasonSpawnFailed, "start %q: create pipes: %w", t.Command, err)
	}

	cmd = exec.Command(t.Command, t.Args...) //nolint:gosec // G204: running the command the operator configured is what a stdio probe is; nothing a server sends reaches it
	cmd.Env = serverEnv(t, os.Environ())
	cmd.Dir = t.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	// exec owns no pipe here (all three are files), so Wait returns at
	// exit; WaitDelay still bounds it should that ever change.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, nil, nil, &Failure{Reason: ReasonSpawnFailed, Err: describeStartError(t.Command, err)}
	}
	// The child has its ends; ours must go, or we would never see EOF.
	_ = stdinR.Close()
	_ = stdoutW.Close()
	_ = stderrW.Close()

	return cmd, stdinW, stdoutR, stderrR, nil
}

// describeStartError names the command and why it did not start, without
// exec's repetition of the name.
func describeStartError(command string, err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Errorf("start %q: %w", command, ee.Err)
	}
	return fmt.Errorf("start %q: %w", command, err)
}

// serverEnv is the environment of a stdio server: the minimal inherited set
// (or everything, if the target asks), then the target's own variables, which
// win.
func serverEnv(t Target, environ []string) []string {
	env := make([]string, 0, len(minimalEnv)+len(t.Env))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, own := t.Env[name]; own {
			continue
		}
		if t.InheritEnv || slices.Contains(minimalEnv, name) || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	names := make([]string, 0, len(t.Env))
	for name := range t.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = append(env, name+"="+t.Env[name])
	}
	return env
}

// waitGroupDead waits until no process of group pgid is alive (zombies
// are dead: init reaps orphans on its own schedule), for at most max. It
// reads /proc; where there is none, it does not wait.
func waitGroupDead(pgid int, max time.Duration) bool {
	deadline := time.Now().Add(max)
	pause := time.Millisecond
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}

// groupAlive reports whether a process of group pgid is alive, from /proc.
func groupAlive(pgid int) bool {
	// The usual case, a group with no member left at all (not even a
	// zombie), is one system call; only a group with members needs the
	// scan of /proc that tells the living from the zombies.
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && fields[2] == want && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}

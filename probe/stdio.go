package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// How long a stdio conn waits for the pipes to drain after the process group
// is dead (a process that escaped the group may still hold them), and for a
// process to exit once its stdout closed, before it says "closed" instead of
// "exited".
const (
	stdioDrainGrace = 250 * time.Millisecond
	stdioExitGrace  = 250 * time.Millisecond
	stdioGroupGrace = 2 * time.Second
)

// minimalEnv are the variables a stdio server inherits from mcpwatch unless
// the target inherits everything; LC_* are passed too.
var minimalEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR"}

// stdioConn speaks newline-delimited JSON-RPC with a process it spawned in its
// own process group. The group is killed with SIGKILL when the probe's context
// ends and when the conn is closed, so nothing the server started outlives the
// probe.
//
// Goroutines: one reads stdout, one reads stderr into a bounded tail, one
// reaps the process; close waits for all three. Writes to stdin are
// serialised by writeMu (requests from call, replies to server pings from the
// reader).
type stdioConn struct {
	obs     *observer
	command string // for error messages; never the environment
	maxMsg  int64

	cmd      *exec.Cmd
	stdin    *os.File
	stdout   *os.File
	stderr   *os.File
	tail     *tailBuffer
	stopKill func() bool // unregisters the kill at the context's end

	writeMu sync.Mutex

	mu         sync.Mutex
	lastID     int64
	pending    map[int64]chan *message
	abandoned  map[int64]bool // requests a caller gave up on: a late answer is no fault
	readErr    *Failure       // why the reader stopped, when it was the server's fault
	exitStatus string

	readerDone chan struct{}
	stderrDone chan struct{}
	exited     chan struct{}
	closeOnce  sync.Once
}

var _ conn = (*stdioConn)(nil)

// startStdio spawns the target's command. The process is killed with its
// whole group as soon as ctx ends.
func startStdio(ctx context.Context, t Target, opts Options, obs *observer) (*stdioConn, error) {
	opts = opts.WithDefaults()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, failf(ReasonTimeout, "start %q: not started, the probe's deadline had passed", t.Command)
		}
		return nil, failf(ReasonCanceled, "start %q: not started, the probe was canceled", t.Command)
	}
	if t.Dir != "" {
		// exec reports a bad directory as the command not being found.
		if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
			return nil, failf(ReasonSpawnFailed, "start %q: working directory %s is not a directory", t.Command, t.Dir)
		}
	}
	// Pipes of our own rather than exec's: exec closes its pipes in Wait,
	// and the reaper calls Wait as soon as the process exits, while the
	// reader may still be draining what the server wrote before dying.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
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
		return nil, failf(ReasonSpawnFailed, "start %q: create pipes: %w", t.Command, err)
	}

	cmd := exec.Command(t.Command, t.Args...)
	cmd.Env = serverEnv(t, os.Environ())
	cmd.Dir = t.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// exec owns no pipe here (all three are files), so Wait returns at
	// exit; WaitDelay still bounds it should that ever change.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, &Failure{Reason: ReasonSpawnFailed, Err: describeStartError(t.Command, err)}
	}
	// The child has its ends; ours must go, or we would never see EOF.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()

	c := &stdioConn{
		obs:        obs,
		command:    t.Command,
		maxMsg:     opts.MaxMessageBytes,
		cmd:        cmd,
		stdin:      stdinW,
		stdout:     stdoutR,
		stderr:     stderrR,
		tail:       newTailBuffer(opts.StderrTailBytes),
		pending:    map[int64]chan *message{},
		abandoned:  map[int64]bool{},
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	c.stopKill = context.AfterFunc(ctx, c.killGroup)
	go c.reap()
	go c.readStderr()
	go c.readStdout()
	return c, nil
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

// killGroup sends SIGKILL to the server's whole process group. The group
// outlives its leader while any member lives, so this works after the
// leader was reaped too.
func (c *stdioConn) killGroup() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}

func (c *stdioConn) reap() {
	err := c.cmd.Wait()
	status := "unknown status"
	if c.cmd.ProcessState != nil {
		status = c.cmd.ProcessState.String()
	} else if err != nil {
		status = err.Error()
	}
	c.mu.Lock()
	c.exitStatus = status
	c.mu.Unlock()
	close(c.exited)
}

func (c *stdioConn) readStderr() {
	defer close(c.stderrDone)
	buf := make([]byte, 4096)
	for {
		n, err := c.stderr.Read(buf)
		c.tail.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) readStdout() {
	r := bufio.NewReaderSize(c.stdout, 64<<10)
	var buf []byte
	for {
		line, err := readBoundedLine(r, c.maxMsg, buf)
		if errors.Is(err, errLineTooLarge) {
			c.stopReading(failf(ReasonTooLarge, "the server wrote a message over %d bytes on stdout (raise the message size cap if it is legitimate)", c.maxMsg))
			return
		}
		if err != nil {
			c.stopReading(nil) // EOF, or our own close: the callers find out why
			return
		}
		if f := c.handleLine(line); f != nil {
			c.stopReading(f)
			return
		}
		if cap(line) <= 1<<20 {
			buf = line // reuse, but do not keep a huge buffer alive
		}
	}
}

func (c *stdioConn) stopReading(f *Failure) {
	c.mu.Lock()
	c.readErr = f
	c.mu.Unlock()
	close(c.readerDone)
}

// handleLine dispatches one line of stdout. It returns a failure only when
// the server broke the protocol so badly that the conn cannot go on.
func (c *stdioConn) handleLine(line []byte) *Failure {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	c.obs.record("recv", line, "")
	var m message
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		c.obs.warn("stdout: skipped a line that is not JSON-RPC: %q", truncate(string(line), 80))
		return nil
	}
	switch {
	case m.isResponse():
		return c.deliver(&m)
	case m.isRequest():
		c.reply(answerServerRequest(&m))
	case m.isNotification():
		c.obs.notification(m.Method)
	default:
		c.obs.warn("stdout: skipped a JSON line that is not a JSON-RPC message: %q", truncate(string(line), 80))
	}
	return nil
}

// deliver hands a response to the call waiting for it.
func (c *stdioConn) deliver(m *message) *Failure {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	if ch, ok := c.pending[id]; ok && err == nil {
		delete(c.pending, id)
		c.mu.Unlock()
		ch <- m // buffered: never blocks
		return nil
	}
	late := err == nil && c.abandoned[id]
	delete(c.abandoned, id)
	c.mu.Unlock()
	switch {
	case late:
		return nil
	case err != nil && m.Error != nil:
		return failf(ReasonProtocol, "the server answered with an error for no request of ours (id %s): %v", truncate(string(m.ID), 40), m.Error)
	case err == nil && id >= 1 && id <= c.lastSent():
		return failf(ReasonProtocol, "the server answered request id %d twice", id)
	}
	return failf(ReasonProtocol, "the server answered id %s, which mcpwatch never sent", truncate(string(m.ID), 40))
}

func (c *stdioConn) lastSent() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastID
}

func (c *stdioConn) reply(m *message) {
	data, err := json.Marshal(m)
	if err == nil {
		// A failed write means the server is going away; the pending call
		// learns that from the reader or the reaper.
		_ = c.write(data)
	}
}

// write sends one message as one line.
func (c *stdioConn) write(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.obs.record("send", data, "")
	_, err := c.stdin.Write(append(data, '\n'))
	return err
}

func (c *stdioConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, ctxFailure(ctx, method, c.obs.start)
	}
	c.mu.Lock()
	c.lastID++
	id := c.lastID
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer c.forget(id)

	data, err := encodeLine(json.RawMessage(strconv.FormatInt(id, 10)), method, params)
	if err != nil {
		return nil, failf(ReasonProtocol, "%s: %w", method, err)
	}
	select {
	case <-c.readerDone:
		return nil, c.lost(ctx, method, nil)
	default:
	}
	if err := c.write(data); err != nil {
		return nil, c.lost(ctx, method, err)
	}

	// When the answer and the end arrive together, the answer wins.
	answered := func() (*message, bool) {
		select {
		case m := <-ch:
			return m, true
		default:
			return nil, false
		}
	}
	select {
	case m := <-ch:
		return lineResult(m, method)
	case <-ctx.Done():
		if m, ok := answered(); ok {
			return lineResult(m, method)
		}
		return nil, ctxFailure(ctx, method, c.obs.start)
	case <-c.readerDone:
		if m, ok := answered(); ok {
			return lineResult(m, method)
		}
		return nil, c.lost(ctx, method, nil)
	case <-c.exited:
		// The leader died; a grandchild may still hold stdout open. Give
		// the reader a moment to drain what was written before the end.
		grace := time.NewTimer(stdioExitGrace)
		defer grace.Stop()
		select {
		case m := <-ch:
			return lineResult(m, method)
		case <-c.readerDone:
		case <-ctx.Done():
		case <-grace.C:
		}
		if m, ok := answered(); ok {
			return lineResult(m, method)
		}
		return nil, c.lost(ctx, method, nil)
	}
}

// forget stops waiting for an answer to id; one that comes later is dropped.
func (c *stdioConn) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.abandoned[id] = true
	}
}

// lost explains why a request will never be answered: the deadline, a
// protocol failure the reader found, or the server going away (with its exit
// status when it exited).
func (c *stdioConn) lost(ctx context.Context, method string, writeErr error) *Failure {
	if ctx.Err() != nil {
		// Our own kill at the deadline closes stdout: that is the deadline.
		return ctxFailure(ctx, method, c.obs.start)
	}
	c.mu.Lock()
	readErr := c.readErr
	c.mu.Unlock()
	if readErr != nil {
		return &Failure{Reason: readErr.Reason, Err: fmt.Errorf("%s: %w", method, readErr.Err)}
	}
	grace := time.NewTimer(stdioExitGrace)
	defer grace.Stop()
	select {
	case <-c.exited:
		c.mu.Lock()
		status := c.exitStatus
		c.mu.Unlock()
		return failf(ReasonExited, "%s: the server process exited (%s) before answering", method, status)
	case <-ctx.Done():
		return ctxFailure(ctx, method, c.obs.start)
	case <-grace.C:
	}
	if writeErr != nil {
		return failf(ReasonClosed, "%s: the server stopped reading stdin: %v", method, writeErr)
	}
	return failf(ReasonClosed, "%s: the server closed stdout but is still running", method)
}

func (c *stdioConn) notify(ctx context.Context, method string, params any) error {
	if ctx.Err() != nil {
		return ctxFailure(ctx, method, c.obs.start)
	}
	data, err := encodeLine(nil, method, params)
	if err != nil {
		return failf(ReasonProtocol, "%s: %w", method, err)
	}
	if err := c.write(data); err != nil {
		return c.lost(ctx, method, err)
	}
	return nil
}

// setProtocol changes nothing on stdio: the wire is the same in both eras.
func (c *stdioConn) setProtocol(Era, string) {}

// close closes stdin, kills the whole process group and reaps it. There is
// no grace period: the probe has what it came for, and a server that ignores
// stdin close and SIGTERM must not hold it up.
func (c *stdioConn) close(context.Context) {
	c.closeOnce.Do(func() {
		c.stopKill()
		c.stdin.Close()
		c.killGroup()
		<-c.exited // the leader got SIGKILL: it is reaped at once
		// A member forked between the first kill and the leader's death
		// would still be in the group.
		c.killGroup()
		// SIGKILL is final but not instant: a big process takes a while
		// to tear down. Return once nothing of the group runs any more.
		if !c.waitGroupDead(stdioGroupGrace) {
			c.obs.warn("process group %d of %q still had live processes %s after SIGKILL", c.cmd.Process.Pid, c.command, stdioGroupGrace)
		}
		c.drain(c.readerDone, c.stdout)
		c.drain(c.stderrDone, c.stderr)
	})
}

// waitGroupDead waits until no process of the server's group is alive
// (zombies are dead: init reaps orphans on its own schedule), for at most
// max. It reads /proc; where there is none, it does not wait.
func (c *stdioConn) waitGroupDead(max time.Duration) bool {
	deadline := time.Now().Add(max)
	pause := time.Millisecond
	for groupAlive(c.cmd.Process.Pid) {
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

// drain waits for a pipe reader to see EOF, which comes when every process
// holding the pipe's other end is dead; one that escaped the group could hold
// it forever, so after a grace period the pipe is closed under the reader.
func (c *stdioConn) drain(done chan struct{}, f *os.File) {
	grace := time.NewTimer(stdioDrainGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		f.Close()
		<-done
	}
	f.Close()
}

// stderrTail is what the server last wrote on stderr, bounded.
func (c *stdioConn) stderrTail() string { return c.tail.String() }

// ctxFailure is the failure of a request cut short by its context: the
// deadline (timeout) or the caller giving up (canceled).
func ctxFailure(ctx context.Context, what string, start time.Time) *Failure {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		budget := ""
		if deadline, ok := ctx.Deadline(); ok {
			budget = fmt.Sprintf(" of %s", deadline.Sub(start).Round(10*time.Millisecond))
		}
		return failf(ReasonTimeout, "%s: no answer within the deadline%s", what, budget)
	}
	return failf(ReasonCanceled, "%s: the probe was canceled", what)
}

// encodeLine marshals a request (id set) or notification for stdio; nil
// params are omitted. encoding/json escapes newlines inside strings, so the
// message is one line.
func encodeLine(id json.RawMessage, method string, params any) ([]byte, error) {
	m := message{JSONRPC: "2.0", ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
		m.Params = raw
	}
	return json.Marshal(&m)
}

// lineResult is the result of an answer, or its error as an *RPCError.
func lineResult(m *message, method string) (json.RawMessage, error) {
	if m.Error != nil {
		rpcErr := *m.Error
		rpcErr.Method = method
		return nil, &rpcErr
	}
	if len(m.Result) == 0 {
		return nil, failf(ReasonProtocol, "%s: the answer has neither result nor error", method)
	}
	return m.Result, nil
}

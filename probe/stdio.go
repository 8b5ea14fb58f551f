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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// How long a stdio conn waits for the pipes to drain after the process group
// is dead (a process that escaped the group may still hold them), for the
// reader to drain what a process wrote before it exited, and for a process
// to be reaped once its stdout closed, before it says "closed" instead of
// "exited": on a loaded machine the reaper runs late, and a server that
// exited must not be reported as one that merely closed stdout.
const (
	stdioDrainGrace = 250 * time.Millisecond
	stdioExitGrace  = 250 * time.Millisecond
	stdioReapGrace  = 2 * time.Second
	stdioGroupGrace = 2 * time.Second
)

// errEndedUnprompted marks the exit of a server that read nothing mcpwatch
// sent: it ended on its own (a missing directory, a missing credential), not
// on the request, so neither a second start nor another era can help.
var errEndedUnprompted = errors.New("before reading any request")

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
	// observed is the observer of the probe on the conn; a conn kept
	// between probes (Live) has the session's own while none runs.
	observed atomic.Pointer[observer]
	command  string // for error messages; never the environment
	maxMsg   int64
	spawned  time.Time

	cmd      *exec.Cmd
	stdin    *os.File
	stdout   *os.File
	stderr   *os.File
	tail     *tailBuffer
	head     *headBuffer // what it wrote first, for a conn kept between probes
	stopKill func() bool // unregisters stop, run at the context's end

	writeMu sync.Mutex
	written int64 // bytes written to stdin, under writeMu

	mu         sync.Mutex
	era        Era // set by setProtocol
	lastID     int64
	pending    map[string]chan *message // by idKey
	abandoned  map[string]bool          // requests a caller gave up on: a late answer is no fault
	readErr    *Failure                 // why the reader stopped, when it was the server's fault
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
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, failf(ReasonTimeout, "start %q: not started, the probe's deadline had passed", t.Command)
		}
		return nil, failf(ReasonCanceled, "start %q: not started, the probe was canceled", t.Command)
	}
	cmd, stdin, stdout, stderr, err := spawn(t)
	if err != nil {
		return nil, err
	}
	c := &stdioConn{
		command:    t.Command,
		spawned:    time.Now(),
		maxMsg:     opts.MaxMessageBytes,
		cmd:        cmd,
		stdin:      stdin,
		stdout:     stdout,
		stderr:     stderr,
		tail:       newTailBuffer(opts.StderrTailBytes),
		head:       newHeadBuffer(opts.StderrTailBytes),
		pending:    map[string]chan *message{},
		abandoned:  map[string]bool{},
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	c.observed.Store(obs)
	c.stopKill = context.AfterFunc(ctx, c.stop)
	go c.reap()
	go c.readStderr()
	go c.readStdout()
	return c, nil
}

// stop ends all the server could hold the probe on at the context's end:
// the process group is killed, and a write to stdin fails at once even when
// a process outside the group keeps the pipe open and full.
func (c *stdioConn) stop() {
	_ = c.stdin.SetWriteDeadline(time.Now())
	c.killGroup()
}

// killGroup sends SIGKILL to the server's whole process group, and to the
// leader through its own handle: a leader that moved itself into another
// group is reached there, and a reaped one is never confused with a new
// process of the same pid. The group outlives its leader while any member
// lives, so this works after the leader was reaped too.
func (c *stdioConn) killGroup() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	_ = c.cmd.Process.Kill()
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
		_, _ = c.head.Write(buf[:n])
		_, _ = c.tail.Write(buf[:n])
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
	c.obs().record("recv", line, "")
	var m *message
	var err error
	if line[0] == '{' {
		m, err = parseMessage(line)
	}
	var dup *duplicateMember
	switch {
	case errors.As(err, &dup):
		// JSON-RPC all the same, and no reading of it can be trusted.
		return failf(ReasonProtocol, "stdout: %v", err)
	case m == nil:
		c.obs().warn("stdout: skipped a line that is not JSON-RPC: %q", sanitize.Truncate(string(line), 80))
		return nil // servers log to stdout too: a line that is not JSON-RPC is skipped with a warning, not a failure
	case m.isResponse():
		return c.deliver(m)
	case m.isRequest():
		c.mu.Lock()
		era := c.era
		c.mu.Unlock()
		if reply := answerServerRequest(m, era, c.obs()); reply != nil {
			c.reply(reply)
		}
	case m.isNotification():
		c.obs().notification(m.Method)
	default:
		c.obs().warn("stdout: skipped a JSON line that is not a JSON-RPC message: %q", sanitize.Truncate(string(line), 80))
	}
	return nil
}

// deliver hands a response to the call waiting for it.
func (c *stdioConn) deliver(m *message) *Failure {
	key := string(idKey(m.ID))
	c.mu.Lock()
	if ch, ok := c.pending[key]; ok {
		delete(c.pending, key)
		c.mu.Unlock()
		ch <- m // buffered: never blocks
		return nil
	}
	late := c.abandoned[key]
	delete(c.abandoned, key)
	c.mu.Unlock()
	id, err := strconv.ParseInt(key, 10, 64)
	sent := err == nil && strconv.FormatInt(id, 10) == key && id >= 1 && id <= c.lastSent()
	switch {
	case late:
		return nil
	case sent:
		return failf(ReasonProtocol, "the server answered request id %d twice", id)
	case m.Error != nil:
		return failf(ReasonProtocol, "the server answered with an error for no request of ours (id %s): %v", sanitize.Truncate(key, 40), m.Error)
	}
	return failf(ReasonProtocol, "the server answered id %s, which mcpwatch never sent", sanitize.Truncate(key, 40))
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
	c.obs().record("send", data, "")
	n, err := c.stdin.Write(append(data, '\n'))
	c.written += int64(n)
	return err
}

// readNothing reports whether the server has read none of what was written
// to its stdin: nothing was written (a write to a process already gone
// fails), or all of it still sits in the pipe. Where the pipe cannot tell
// (not Linux), it says false, and a server that ended is taken to have
// read its request. Call it before the conn is closed.
func (c *stdioConn) readNothing() bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.written == 0 {
		return true
	}
	unread, ok := pipeUnread(c.stdin)
	return ok && int64(unread) >= c.written
}

func (c *stdioConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, ctxFailure(ctx, method, c.obs().start)
	}
	c.mu.Lock()
	c.lastID++
	id := strconv.FormatInt(c.lastID, 10)
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer c.forget(id)

	data, _, err := encode(json.RawMessage(id), method, params)
	if err != nil {
		return nil, err
	}
	select {
	case <-c.readerDone:
		return nil, c.lost(ctx, method, nil)
	default:
	}
	if err := c.write(data); err != nil {
		return nil, c.lost(ctx, method, err)
	}

	select {
	case m := <-ch:
		return responseResult(m, method, 0)
	case <-ctx.Done():
	case <-c.readerDone:
	case <-c.exited:
		// The leader died; a grandchild may still hold stdout open. Give
		// the reader a moment to drain what was written before the end.
		grace := time.NewTimer(stdioExitGrace)
		defer grace.Stop()
		select {
		case m := <-ch:
			return responseResult(m, method, 0)
		case <-c.readerDone:
		case <-ctx.Done():
		case <-grace.C:
		}
	}
	// When the answer and the end arrive together, the answer wins.
	select {
	case m := <-ch:
		return responseResult(m, method, 0)
	default:
		return nil, c.lost(ctx, method, nil)
	}
}

// forget stops waiting for an answer to id; one that comes later is dropped.
func (c *stdioConn) forget(id string) {
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
		return ctxFailure(ctx, method, c.obs().start)
	}
	c.mu.Lock()
	readErr := c.readErr
	c.mu.Unlock()
	if readErr != nil {
		return &Failure{Reason: readErr.Reason, Err: fmt.Errorf("%s: %w", method, readErr.Err)}
	}
	grace := time.NewTimer(stdioReapGrace)
	defer grace.Stop()
	select {
	case <-c.exited:
		c.mu.Lock()
		status := c.exitStatus
		c.mu.Unlock()
		if c.readNothing() {
			return &Failure{Reason: ReasonExited, Err: fmt.Errorf("%s: the server process exited (%s) %w mcpwatch sent", method, status, errEndedUnprompted)}
		}
		return failf(ReasonExited, "%s: the server process exited (%s) before answering", method, status)
	case <-ctx.Done():
		return ctxFailure(ctx, method, c.obs().start)
	case <-grace.C:
	}
	if writeErr != nil {
		return failf(ReasonClosed, "%s: the server stopped reading stdin: %v", method, writeErr)
	}
	return failf(ReasonClosed, "%s: the server closed stdout but is still running", method)
}

func (c *stdioConn) notify(ctx context.Context, method string, params any) error {
	if ctx.Err() != nil {
		return ctxFailure(ctx, method, c.obs().start)
	}
	data, _, err := encode(nil, method, params)
	if err != nil {
		return err
	}
	if err := c.write(data); err != nil {
		return c.lost(ctx, method, err)
	}
	return nil
}

// dead reports whether the server can no longer answer: its process exited
// or it closed stdout. A server that is merely slow is alive.
func (c *stdioConn) dead() bool {
	select {
	case <-c.exited:
		return true
	case <-c.readerDone:
		return true
	default:
		return false
	}
}

// setProtocol keeps the era, which decides whether server requests are
// answered; the wire is the same in both.
func (c *stdioConn) setProtocol(era Era, _ string) {
	c.mu.Lock()
	c.era = era
	c.mu.Unlock()
}

// close closes stdin, kills the whole process group and reaps it. There is
// no grace period: the probe has what it came for, and a server that ignores
// stdin close and SIGTERM must not hold it up.
func (c *stdioConn) close(context.Context) {
	c.closeOnce.Do(func() {
		c.stopKill()
		_ = c.stdin.Close()
		c.killGroup()
		<-c.exited // the leader got SIGKILL: it is reaped at once
		// A member forked between the first kill and the leader's death
		// would still be in the group.
		c.killGroup()
		// SIGKILL is final but not instant: a big process takes a while
		// to tear down. Return once nothing of the group runs any more.
		if !waitGroupDead(c.cmd.Process.Pid, stdioGroupGrace) {
			c.obs().warn("process group %d of %q still had live processes %s after SIGKILL", c.cmd.Process.Pid, c.command, stdioGroupGrace)
		}
		c.drain(c.readerDone, c.stdout)
		c.drain(c.stderrDone, c.stderr)
	})
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
		_ = f.Close()
		<-done
	}
	_ = f.Close()
}

// obs is the observer of what the conn sees now.
func (c *stdioConn) obs() *observer { return c.observed.Load() }

// stderrTail is what the server last wrote on stderr, bounded.
func (c *stdioConn) stderrTail() string { return c.tail.String() }

// stderrStartAndTail is what the server wrote on stderr first and what it
// wrote last, each bounded: a server kept running between probes may log
// for days, and what it said as it started (a rejected key it then serves
// on) must stay visible to every probe of it.
func (c *stdioConn) stderrStartAndTail() string { return joinHeadTail(c.head, c.tail) }

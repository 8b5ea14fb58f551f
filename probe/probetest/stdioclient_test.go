package probetest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// waitLimit bounds every wait for a server in these tests. It only guards
// against a hang: no assertion depends on it.
const waitLimit = 20 * time.Second

// stdioClient drives a test server started with Command, in its own process
// group, over raw newline-delimited JSON-RPC.
type stdioClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan line
	stderr *syncBuffer
	nextID int
	exited chan struct{}
	err    error // the exit, once exited is closed
}

// line is one line of the server's stdout; a long one keeps only its head.
type line struct {
	head []byte
	size int
}

const keepLine = 1 << 20

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startStdio starts a stdio test server with a minimal environment plus
// the Command's env and extra, as a prober would.
func startStdio(t *testing.T, cfg probetest.Config, extra map[string]string) *stdioClient {
	t.Helper()
	cmd := serverCommand(cfg, extra)
	c := &stdioClient{t: t, cmd: cmd, lines: make(chan line, 16), stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start test server: %v", err)
	}
	c.stdin = stdin
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		readLines(stdout, c.lines)
	}()
	go func() {
		<-readDone // Wait closes stdout: read everything first
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range c.lines { // unblock the reader
		}
		<-c.exited
	})
	return c
}

// serverCommand is the test server's command in its own process group,
// with a minimal environment plus the Command's env and extra.
func serverCommand(cfg probetest.Config, extra map[string]string) *exec.Cmd {
	path, args, env := probetest.Command(cfg)
	cmd := exec.Command(path, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// readLines sends each line of r, until r ends.
func readLines(r io.Reader, out chan<- line) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var l line
		for {
			chunk, err := br.ReadSlice('\n')
			l.size += len(chunk)
			if len(l.head) < keepLine {
				l.head = append(l.head, chunk[:min(len(chunk), keepLine-len(l.head))]...)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				if l.size > 0 {
					out <- l
				}
				return
			}
		}
		l.head = bytes.TrimRight(l.head, "\n")
		out <- l
	}
}

// write sends one raw line.
func (c *stdioClient) write(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to test server: %v (stderr: %s)", err, c.stderr)
	}
}

// send sends a request and returns its id.
func (c *stdioClient) send(method string, params any) int {
	c.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.write(msg)
	return c.nextID
}

func (c *stdioClient) notify(method string) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method})
}

// nextLine returns the next line of stdout.
func (c *stdioClient) nextLine() line {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("test server closed stdout (stderr: %s)", c.stderr)
		}
		return l
	case <-time.After(waitLimit):
		c.t.Fatalf("no line from the test server in %v (stderr: %s)", waitLimit, c.stderr)
	}
	return line{}
}

func (c *stdioClient) recv() rpcMsg {
	c.t.Helper()
	return decodeMsg(c.t, c.nextLine().head)
}

// call sends a request and returns the next message, which must answer it.
func (c *stdioClient) call(method string, params any) rpcMsg {
	c.t.Helper()
	id := c.send(method, params)
	m := c.recv()
	if string(m.ID) != strconv.Itoa(id) {
		c.t.Fatalf("%s: got a message with id %s, want %d: %+v", method, m.ID, id, m)
	}
	return m
}

// initialize does the legacy handshake.
func (c *stdioClient) initialize(version string) rpcMsg {
	c.t.Helper()
	m := c.call("initialize", initializeParams(version))
	c.notify("notifications/initialized")
	return m
}

// wait waits for the server to exit and returns its exit code.
func (c *stdioClient) wait() int {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(waitLimit):
		c.t.Fatalf("test server did not exit in %v", waitLimit)
	}
	var exit *exec.ExitError
	if errors.As(c.err, &exit) {
		return exit.ExitCode()
	}
	if c.err != nil {
		c.t.Fatalf("wait: %v", c.err)
	}
	return 0
}

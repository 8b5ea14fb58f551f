package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// daemonProc is the built `mcpwatch serve` running as a subprocess, as a
// user runs it.
type daemonProc struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	logPath string
	client  *http.Client
	exited  chan struct{}
	waitErr error
}

// startDaemon starts `mcpwatch serve` on a free loopback port with the
// configuration at configPath, and waits until /-/healthy answers. wrap,
// when set, rewrites its command line (to start it in a control group).
func startDaemon(ctx context.Context, binary, configPath, dir string, pprof bool, env []string, wrap func([]string) []string) (*daemonProc, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--config.file", configPath, "--web.listen-address", addr, "--log.level", "warn"}
	if pprof {
		args = append(args, "--web.enable-pprof")
	}
	// Run a copy: bin/ is shared, and a `make build` elsewhere must not
	// swap the binary under a measurement.
	binary, err = copyExecutable(binary, filepath.Join(dir, "mcpwatch"))
	if err != nil {
		return nil, fmt.Errorf("mcpwatch binary: %w (run 'make build' first, or pass -mcpwatch)", err)
	}
	logPath := filepath.Join(dir, "mcpwatch.log")
	logFile, err := os.Create(logPath) //nolint:gosec // G304: a file in the harness's own work directory
	if err != nil {
		return nil, fmt.Errorf("create the daemon's log: %w", err)
	}
	defer func() { _ = logFile.Close() }() // the child holds its own descriptor
	argv := append([]string{binary}, args...)
	if wrap != nil {
		argv = wrap(argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec // G204: the mcpwatch binary the harness measures (-mcpwatch), copied into its work directory
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = env
	// Its own process group, so a Ctrl-C of the harness reaches mcpwatch
	// only through the harness's orderly stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	d := &daemonProc{
		cmd: cmd, base: "http://" + addr, logPath: logPath,
		client: &http.Client{},
		exited: make(chan struct{}),
	}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	// Loading 10,000 servers and their lock takes seconds, more on a
	// loaded machine.
	if err := d.waitFor(ctx, "/-/healthy", 2*time.Minute); err != nil {
		_, _ = d.stop() // how it stopped is not the news: that it never came up is
		return nil, fmt.Errorf("mcpwatch serve did not come up: %w\n%s", err, d.logTail())
	}
	return d, nil
}

func (d *daemonProc) pid() int { return d.cmd.Process.Pid }

// waitFor polls path until it answers 200, the process exits, limit
// passes or ctx ends.
func (d *daemonProc) waitFor(ctx context.Context, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		_, _, err := d.get(ctx, path)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.exited:
			return fmt.Errorf("mcpwatch exited: %w", d.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not 200 within %s: %w", path, limit, err)
		}
	}
}

// get fetches path and returns the body and how long the whole exchange
// took.
func (d *daemonProc) get(ctx context.Context, path string) ([]byte, time.Duration, error) {
	// A CPU profile takes as long as it was asked to; anything else that
	// takes a minute is a fault to report.
	limit := time.Minute
	if strings.HasPrefix(path, "/debug/pprof/profile") {
		limit = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return nil, took, fmt.Errorf("GET %s: read body: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, took, fmt.Errorf("GET %s: status %d: %.200s", path, resp.StatusCode, body)
	}
	return body, took, nil
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 15 s). It
// returns how long mcpwatch took to stop.
func (d *daemonProc) stop() (time.Duration, error) {
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
		return time.Since(start), errors.New("mcpwatch did not stop within 15 s of SIGTERM; killed")
	}
	took := time.Since(start)
	var exit *exec.ExitError
	if errors.As(d.waitErr, &exit) {
		return took, fmt.Errorf("mcpwatch exited with %w after SIGTERM", d.waitErr)
	}
	return took, d.waitErr
}

// logTail is the end of the daemon's log, for error messages.
func (d *daemonProc) logTail() string {
	raw, err := os.ReadFile(d.logPath)
	if err != nil {
		return ""
	}
	if len(raw) > 2000 {
		raw = raw[len(raw)-2000:]
	}
	return "mcpwatch log (" + d.logPath + "), last lines:\n" + string(bytes.TrimSpace(raw))
}

// logWarnings counts the lines of the daemon's log at level warn or above.
func (d *daemonProc) logWarnings() int {
	raw, err := os.ReadFile(d.logPath)
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(raw)) {
		if strings.Contains(line, "level=warn") || strings.Contains(line, "level=error") {
			n++
		}
	}
	return n
}

// freeLoopbackAddr picks a free port on 127.0.0.1. Another process could
// take it before mcpwatch binds it; mcpwatch then fails to start, loudly.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr, nil
}

// copyExecutable copies the binary at src to dst and returns dst.
func copyExecutable(src, dst string) (string, error) {
	in, err := os.Open(src) //nolint:gosec // G304: the binary the operator named with -mcpwatch
	if err != nil {
		return "", fmt.Errorf("open %s: %w", src, err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700) //nolint:gosec // G304: a new file in the harness's own work directory
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close() // the copy error is the news
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	return dst, out.Close()
}

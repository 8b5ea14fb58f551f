package probetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// envGrandchild marks the Unresponsive grandchild; its value is the pid
// file to write.
const envGrandchild = "MCPWATCH_PROBETEST_GRANDCHILD"

// maxLifetime ends the processes that ignore SIGTERM, so a failed test
// cannot leave them behind forever. No test waits this long.
const maxLifetime = 10 * time.Minute

// Command returns how to start the current test binary as a stdio test
// server with cfg: path is the running executable, args keep it from running
// tests, and env carries the encoded Config (EnvConfig). Put env in the
// server's own environment (probe.Target.Env): a prober passes only a
// minimal environment plus that. Credentials (Config.TokenEnv, REPORT_SCOPE)
// are the caller's to add to env. env also sets GORACE=atexit_sleep_ms=0,
// so a child built with -race exits at once instead of a second later. The
// test binary's TestMain must call RunIfChild first. Command panics on an
// invalid Config.
func Command(cfg Config) (path string, args []string, env map[string]string) {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	path, err := os.Executable()
	if err != nil {
		path = os.Args[0]
	}
	return path, []string{"-test.run=^$"}, map[string]string{
		EnvConfig: encodeConfig(cfg),
		"GORACE":  "atexit_sleep_ms=0",
	}
}

// RunIfChild serves stdio and exits when this process was started by
// Command (or is the Unresponsive grandchild); otherwise it returns at once.
// Call it first in TestMain, and first in any main that serves Unresponsive.
// Exit status: 0 when stdin ends, 1 for ExitAtOnce or a serving error, 2 for
// an unusable Config.
func RunIfChild() {
	if pidFile, ok := os.LookupEnv(envGrandchild); ok {
		runGrandchild(pidFile)
		os.Exit(0)
	}
	raw, ok := os.LookupEnv(EnvConfig)
	if !ok {
		return
	}
	os.Exit(runChild(raw))
}

func runChild(raw string) int {
	cfg, err := decodeConfig(raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	err = ServeStdio(context.Background(), cfg, os.Stdin, os.Stdout, os.Stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrExitAtOnce), errors.Is(err, ErrUnknownFirst):
		return 1
	case cfg.Behavior.httpOnly():
		fmt.Fprintln(os.Stderr, err)
		return 2
	default:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
}

// serveUnresponsive is the Unresponsive behavior over stdio: a server that
// hangs, ignores SIGTERM and stdin closing, and has spawned a grandchild
// that holds its stdout and stderr, as npx -> sh -> node does.
func serveUnresponsive(ctx context.Context, cfg Config, in io.Reader, errOut io.Writer) error {
	signal.Ignore(syscall.SIGTERM)
	if err := spawnGrandchild(cfg.PIDFile); err != nil {
		fmt.Fprintf(errOut, "probetest: unresponsive: %v\n", err)
	}
	fmt.Fprintln(errOut, "probetest: unresponsive: ignoring SIGTERM, stdin and every request")
	// Drain stdin so the client's writes never block, and ignore its end.
	go func() { _, _ = io.Copy(io.Discard, in) }()
	timer := time.NewTimer(maxLifetime)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func spawnGrandchild(pidFile string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable for the grandchild: %w", err)
	}
	cmd := exec.Command(exe, "-test.run=^$") //nolint:gosec // G204: the kit re-runs its own test binary
	cmd.Env = append(withoutVar(os.Environ(), EnvConfig), envGrandchild+"="+pidFile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start grandchild %s: %w", exe, err)
	}
	// Never waited for: the grandchild is meant to outlive any polite end.
	return cmd.Process.Release()
}

// runGrandchild ignores SIGTERM, tells the test its pid, and sleeps.
func runGrandchild(pidFile string) {
	signal.Ignore(syscall.SIGTERM)
	if pidFile != "" {
		if err := writeFileAtomic(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
			fmt.Fprintf(os.Stderr, "probetest: grandchild: %v\n", err)
		}
	}
	time.Sleep(maxLifetime)
}

// writeFileAtomic writes through a temporary file, so a reader never sees a
// partial pid.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pid-*")
	if err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename; left by a failed write
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write pid file %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write pid file %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	return nil
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

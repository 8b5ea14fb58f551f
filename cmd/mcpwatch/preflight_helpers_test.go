package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binaries the preflight tests run, built once next to mcpwatchBin.
var helperBins sync.Map // package path -> *builtBin

type builtBin struct {
	once sync.Once
	path string
	err  error
}

// buildBin builds a main package of this module once per test binary.
func buildBin(t *testing.T, name, pkg string) string {
	t.Helper()
	v, _ := helperBins.LoadOrStore(pkg, &builtBin{})
	b := v.(*builtBin)
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(mcpwatchBin), name)
		out, err := exec.Command(goTool(), "build", "-o", b.path, pkg).CombinedOutput()
		if err != nil {
			b.err = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if b.err != nil {
		t.Fatalf("build %s: %v", pkg, b.err)
	}
	return b.path
}

func reportserverBin(t *testing.T) string {
	return buildBin(t, "reportserver", "github.com/mcpwatch/mcpwatch/examples/reportserver")
}

func testserverBin(t *testing.T) string {
	return buildBin(t, "mcpwatch-testserver", "github.com/mcpwatch/mcpwatch/internal/tools/mcpwatch-testserver")
}

// cliResult is one run of the built mcpwatch.
type cliResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r cliResult) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout:\n" + r.stdout + "stderr:\n" + r.stderr
}

// runBin runs the built mcpwatch in dir with only PATH, HOME and env in its
// environment, as a CI step would.
func runBin(t *testing.T, dir string, env map[string]string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(mcpwatchBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := cliResult{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	default:
		t.Fatalf("run mcpwatch %v: %v", args, err)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("mcpwatch %v crashed:\n%s", args, r)
	}
	return r
}

// writeJSON writes v as JSON to dir/name and returns the path.
func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// claudeCodeConfig is a Claude Code .mcp.json.
func claudeCodeConfig(servers map[string]any) map[string]any {
	return map[string]any{"mcpServers": servers}
}

// reportEntry is a .mcp.json entry running the example report server with
// its credential from the launch environment, as the Python preflight's .mcp.json does.
func reportEntry(t *testing.T) map[string]any {
	return map[string]any{
		"command": reportserverBin(t),
		"env":     map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}", "REPORT_SCOPE": "${REPORT_SCOPE:-full}"},
	}
}

// startHTTPReportServer runs the example report server over HTTP on a free
// loopback port with token as its credential, and returns its /mcp URL.
func startHTTPReportServer(t *testing.T, token string) string {
	t.Helper()
	cmd := exec.Command(reportserverBin(t), "--http", "127.0.0.1:0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "REPORT_API_TOKEN=" + token}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var url string
	if lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "serving streamable HTTP at "); ok {
			url = strings.TrimSpace(after)
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for lines.Scan() {
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-drained
		_ = cmd.Wait()
	})
	if url == "" {
		t.Fatal("the report server did not say where it serves")
	}
	return url
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// assertContains checks that text holds every part, in order.
// usageCase is a command line that is a usage error, and what its error
// says.
type usageCase struct {
	args []string
	msg  string
}

// assertUsageErrors runs each case in dir: exit 2, its message on stderr.
func assertUsageErrors(t *testing.T, dir string, env map[string]string, cases []usageCase) {
	t.Helper()
	for _, u := range cases {
		r := runBin(t, dir, env, u.args...)
		if r.code != exitUsage {
			t.Errorf("%v: want exit 2, got %s", u.args, r)
		}
		assertContains(t, strings.Join(u.args, " "), r.stderr, u.msg)
	}
}

func assertContains(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	rest := text
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("%s: want %q (after the earlier parts) in:\n%s", what, p, text)
			return
		}
		rest = rest[i+len(p):]
	}
}

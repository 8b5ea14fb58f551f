package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// runGuarded is runCLI failing the test when the command has not returned
// after two minutes: the guard of a command that would block for ever,
// not a timing claim.
func runGuarded(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type out struct {
		code           int
		stdout, stderr string
	}
	done := make(chan out, 1)
	go func() {
		code, stdout, stderr := runCLI(t, env, args...)
		done <- out{code, stdout, stderr}
	}()
	select {
	case o := <-done:
		return o.code, o.stdout, o.stderr
	case <-time.After(2 * time.Minute):
		t.Fatalf("mcpwatch %s has not returned after two minutes: it blocks", strings.Join(args, " "))
		return 0, "", ""
	}
}

// A secret file that is a named pipe is a wiring fault like a missing one:
// config check reports it, check fails the server with reason config, and
// the daemon's first round ends. All three blocked for ever (the open of a
// pipe waits for a writer), past --timeout and SIGTERM.
func TestANamedPipeBlocksNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testtool.Mkfifo(t, filepath.Join(dir, "token"))
	file := filepath.Join(dir, "mcpwatch.yml")
	writeTestFile(t, file, "servers:\n  report:\n    command: /bin/true\n    env: {TOKEN: \"${file:token}\"}\n")
	writeTestFile(t, filepath.Join(dir, "mcp-tools.lock.json"), `{"report": ["fetch_daily_report"]}`)
	const why = "token: a named pipe (FIFO), not a regular file"

	code, stdout, _ := runGuarded(t, nil, "config", "check", "-c", file)
	if code != exitConfig || !strings.Contains(stdout, why) {
		t.Errorf("config check: exit %d, want %d naming the pipe:\n%s", code, exitConfig, stdout)
	}
	code, stdout, _ = runGuarded(t, nil, "check", "-c", file, "--timeout", "5s")
	if code != exitConfig || !strings.Contains(stdout, "config error: ") || !strings.Contains(stdout, why) {
		t.Errorf("check: exit %d, want %d with a config error naming the pipe:\n%s", code, exitConfig, stdout)
	}

	base := serveInProcess(t, nil, "-c", file)
	waitUntil(t, "the daemon's readiness", func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// A configuration whose references nest too deep is refused by a reload
// like any bad file, and the daemon goes on with the running one: 400,000
// nested ${A:-...} made the parser overflow its stack, and the daemon died.
func TestADeeplyNestedReloadIsRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcpwatch.yml")
	good := "servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n"
	writeTestFile(t, file, good)
	base := serveInProcess(t, nil, "-c", file, "--web.enable-lifecycle")

	const n = 400_000
	writeTestFile(t, file, good+"    headers: {Authorization: \""+strings.Repeat("${A:-", n)+"x"+strings.Repeat("}", n)+"\"}\n")
	resp, err := http.Post(base+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("POST /-/reload of a configuration nested 400,000 deep = 200, want it refused")
	}
	if body := scrape(t, base+"/metrics"); !hasSample(body, "mcpwatch_config_last_reload_successful 0") {
		t.Errorf("the daemon does not report the failed reload")
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// runCLI runs mcpwatch in-process with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), testCLI(&out, &errOut, env), args)
	return code, out.String(), errOut.String()
}

// testCLI is a cli whose environment is env and nothing else.
func testCLI(stdout, stderr io.Writer, env map[string]string) *cli {
	return &cli{stdout: stdout, stderr: stderr, lookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
}

// serverArgs are the mcpwatch probe arguments that spawn a probetest stdio
// server with cfg (the kit's variable passed with --env).
func serverArgs(cfg probetest.Config, extra ...string) []string {
	path, args, env := probetest.Command(cfg)
	var out []string
	for k, v := range env {
		out = append(out, "--env", k+"="+v)
	}
	out = append(out, extra...)
	return append(append(out, "--", path), args...)
}

func TestProbeUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		has  string
	}{
		{"nothing to probe", nil, "give a command"},
		{"both", []string{"--url", "http://127.0.0.1:1/", "--", "x"}, "not both"},
		{"bad era", []string{"--era", "future", "--", "x"}, "--era"},
		{"bad format", []string{"--format", "yaml", "--", "x"}, `--format "yaml": want one of text, json`},
		{"output as the format, the old spelling", []string{"-o", "json", "--", "x"}, `--output "json": --output names the file to write; for the output format write --format json`},
		{"bad transport", []string{"--url", "http://127.0.0.1:1/", "--transport", "smoke"}, "--transport"},
		{"header for a command", []string{"--header", "A: b", "--", "x"}, "--header does not apply"},
		{"env for a URL", []string{"--url", "http://127.0.0.1:1/", "--env", "A=b"}, "--env does not apply"},
		{"cwd for a URL", []string{"--url", "http://127.0.0.1:1/", "--cwd", "/"}, "--cwd does not apply"},
		{"env without =", []string{"--env", "TOKEN", "--", "x"}, "NAME=VALUE"},
		{"env without =, cut between runes", []string{"--env", "aéééééééé", "--", "x"}, `--env "aééééé…": want NAME=VALUE`},
		{"header without colon", []string{"--url", "http://127.0.0.1:1/", "--header", "Authorization Bearer x"}, "'Name: value'"},
		{"zero timeout", []string{"--timeout", "0s", "--", "x"}, "--timeout"},
		{"bad size", []string{"--max-message-bytes", "lots", "--", "x"}, "--max-message-bytes"},
		{"unknown flag", []string{"--frobnicate", "--", "x"}, "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, nil, append([]string{"probe"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.has) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, stderr, stdout, tc.has)
			}
		})
	}
}

func TestProbeHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCLI(t, nil, "probe", "--help")
	for _, want := range []string{"--timeout", "--url", "--header", "${VAR}", "Examples:", "Exit 0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// probeJSON is the part of mcpwatch probe --format json that scripts read.
type probeJSON struct {
	OK              bool    `json:"ok"`
	Reason          string  `json:"reason"`
	Error           string  `json:"error"`
	Era             string  `json:"era"`
	ProtocolVersion string  `json:"protocol_version"`
	Transport       string  `json:"transport"`
	Duration        float64 `json:"duration_seconds"`
	StderrTail      string  `json:"stderr_tail"`
	Tools           []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func decodeProbeJSON(t *testing.T, stdout string) probeJSON {
	t.Helper()
	var r probeJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if !strings.Contains(stdout, `"tools": [`) {
		t.Errorf("tools is not an array in %s", stdout)
	}
	return r
}

func TestProbeStdio(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token-value"
	env := map[string]string{"REPORT_TOKEN": secret}
	tests := []struct {
		name   string
		cfg    probetest.Config
		flags  []string
		env    map[string]string
		code   int
		reason string
		tools  int
		era    string
		has    []string // in the text output
	}{
		{name: "healthy", cfg: probetest.Config{}, code: exitOK, tools: 2, era: "legacy",
			has: []string{"ok: ", "lists 2 tools", "fetch_daily_report", "list_report_dates", "legacy, protocol 2025-11-25", "transport  stdio", "probetest"}},
		{name: "modern", cfg: probetest.Config{Era: probetest.EraModern}, code: exitOK, tools: 2, era: "modern",
			has: []string{"modern, protocol 2026-07-28"}},
		{name: "token expanded from the environment", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: secret},
			flags: []string{"--env", "REPORT_API_TOKEN=${REPORT_TOKEN}"}, env: env, code: exitOK, tools: 2, era: "legacy"},
		{name: "token from a default", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: "dflt"},
			flags: []string{"--env", "REPORT_API_TOKEN=${NOT_SET_ANYWHERE_X:-dflt}"}, code: exitOK, tools: 2, era: "legacy"},
		{name: "zero tools is a successful probe", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: secret},
			code: exitOK, tools: 0, era: "legacy", has: []string{"lists 0 tools"}},
		{name: "unset variable", cfg: probetest.Config{},
			flags: []string{"--env", "REPORT_LOG_DIR=${MCPWATCH_SURELY_UNSET_VAR}"}, code: exitFailed, reason: "config",
			has: []string{"FAILED (config)", "MCPWATCH_SURELY_UNSET_VAR", "--env REPORT_LOG_DIR"}},
		// The flags are a server like a configured one: a credential given
		// without a value is not sent to the server (launch.Build).
		{name: "credential given empty", cfg: probetest.Config{},
			flags: []string{"--env", "API_KEY="}, code: exitFailed, reason: "credential_missing",
			has: []string{"FAILED (credential_missing)", "env:API_KEY has no value (it is written empty)"}},
		{name: "credential from an unset variable", cfg: probetest.Config{},
			flags: []string{"--env", "REPORT_API_TOKEN=${MCPWATCH_SURELY_UNSET_VAR}"}, code: exitFailed, reason: "credential_missing",
			has: []string{"FAILED (credential_missing)", "env:REPORT_API_TOKEN has no value (${MCPWATCH_SURELY_UNSET_VAR} is not set)"}},
		// It ended before reading a request: nothing is known of its era.
		{name: "exits at once", cfg: probetest.Config{Behavior: probetest.ExitAtOnce}, code: exitFailed, reason: "exited",
			has: []string{"FAILED (exited)", "exit status 1", "before reading any request", "| fatal: REPORT_API_TOKEN is not set"}},
		{name: "stuck cursor", cfg: probetest.Config{Behavior: probetest.StuckCursor}, code: exitFailed, reason: "pagination", era: "legacy"},
		{name: "huge line under a small cap", cfg: probetest.Config{Behavior: probetest.HugeLine}, flags: []string{"--max-message-bytes", "64KiB"},
			code: exitFailed, reason: "too_large", era: "legacy", has: []string{"65536"}},
		{name: "legacy pinned on a dual server", cfg: probetest.Config{Era: probetest.EraDual}, flags: []string{"--era", "legacy"},
			code: exitOK, tools: 2, era: "legacy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"probe"}, serverArgs(tc.cfg, tc.flags...)...)
			code, text, stderr := runCLI(t, tc.env, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, text, stderr)
			}
			for _, want := range tc.has {
				if !strings.Contains(text, want) {
					t.Errorf("text output lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, secret) {
				t.Errorf("text output shows a secret:\n%s", text)
			}

			jsonArgs := append([]string{"probe", "--format", "json"}, serverArgs(tc.cfg, tc.flags...)...)
			code, out, _ := runCLI(t, tc.env, jsonArgs...)
			r := decodeProbeJSON(t, out)
			if code != tc.code || r.OK != (tc.code == exitOK) || r.Reason != tc.reason || len(r.Tools) != tc.tools || r.Era != tc.era {
				t.Errorf("exit %d, json %+v", code, r)
			}
			if r.OK && (r.Transport != "stdio" || r.ProtocolVersion == "" || r.Duration <= 0) {
				t.Errorf("json %+v", r)
			}
			if strings.Contains(out, secret) {
				t.Errorf("JSON output shows a secret")
			}
		})
	}
}

// The built binary: the deadline holds end to end, and nothing of the
// server survives. Not before the deadline (timers never fire early), and
// before ten times it: generous for a loaded machine, and the server, which
// never answers, lives for minutes. The server's grandchild must have
// started by the deadline for its end to be checked: on a loaded machine,
// where a -race test server can take longer than 2 s to start it, the
// deadline is doubled until it has (probetest.UpWithin), each deadline held.
func TestProbeBinaryDeadline(t *testing.T) {
	dir := t.TempDir()
	last, up := probetest.UpWithin(2*time.Second, func(deadline time.Duration) bool {
		pidFile := filepath.Join(dir, "grandchild-"+deadline.String()+".pid")
		args := append([]string{"probe", "--timeout", deadline.String(), "--format", "json"},
			serverArgs(probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile})...)
		start := time.Now()
		out, err := exec.Command(mcpwatchBin, args...).Output()
		elapsed := time.Since(start)
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailed {
			t.Fatalf("exit %v, want 1", err)
		}
		if r := decodeProbeJSON(t, string(out)); r.Reason != "timeout" {
			t.Errorf("reason %q (%s), want timeout", r.Reason, r.Error)
		}
		if elapsed < deadline || elapsed > 10*deadline {
			t.Errorf("mcpwatch returned after %s, want at the %s deadline", elapsed, deadline)
		}
		raw, err := os.ReadFile(pidFile)
		if errors.Is(err, fs.ErrNotExist) {
			t.Logf("the server had not started its grandchild by the %s deadline", deadline)
			return false
		}
		if err != nil {
			t.Fatalf("grandchild pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || pid <= 1 {
			t.Fatalf("pid file %q", raw)
		}
		if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			t.Errorf("grandchild %d survived mcpwatch", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return true
	})
	if !up {
		t.Fatalf("the server had not started its grandchild even by a %s deadline", last)
	}
}

// SIGINT ends a probe at once with reason canceled, and nothing of the
// server survives. mcpwatch handles SIGINT from before it starts a server,
// so the pid file the server's grandchild writes says the handler is in
// place and the probe is under way. "At once" is far below the 60 s
// timeout, with room for a loaded machine.
func TestProbeBinaryInterrupted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	args := append([]string{"probe", "--timeout", "60s", "--format", "json"},
		serverArgs(probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile})...)
	cmd := exec.Command(mcpwatchBin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitUntil(t, "the server's grandchild", func() bool {
		_, err := os.Stat(pidFile)
		return err == nil
	})
	start := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	var err error
	select {
	case err = <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("mcpwatch still running 20s after SIGINT")
	}
	t.Logf("stopped %s after SIGINT", time.Since(start).Round(time.Millisecond))
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailed {
		t.Fatalf("exit %v, want 1", err)
	}
	if r := decodeProbeJSON(t, out.String()); r.Reason != "canceled" {
		t.Errorf("reason %q, want canceled", r.Reason)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err != nil || pid <= 1 {
		t.Errorf("pid file %q", raw)
	} else if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		t.Errorf("grandchild %d survived the interrupted probe", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestProbeURL(t *testing.T) {
	t.Parallel()
	const token = "http-s3cret"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cfg    probetest.Config
		sse    bool
		flags  []string
		code   int
		reason string
		tools  int
		has    []string
	}{
		{name: "token from the environment", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: token},
			flags: []string{"--header", "Authorization: Bearer ${HTTP_TOKEN}"}, code: exitOK, tools: 2, has: []string{"transport  http"}},
		{name: "token from a file", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: token},
			flags: []string{"--header", "Authorization: Bearer ${file:" + tokenFile + "}"}, code: exitOK, tools: 2},
		{name: "wrong token", cfg: probetest.Config{Behavior: probetest.Unauthorized401, Token: token},
			flags: []string{"--header", "Authorization: Bearer wrong-${HTTP_TOKEN}"}, code: exitFailed, reason: "unauthorized",
			has: []string{"FAILED (unauthorized)", "http       401", "challenge  Bearer"}},
		{name: "legacy SSE through auto", cfg: probetest.Config{}, sse: true, code: exitOK, tools: 2, has: []string{"transport  sse"}},
		// --transport reads what mcpwatch.yml and client configs take.
		{name: "streamable-http spelled as a client config does", cfg: probetest.Config{},
			flags: []string{"--transport", "streamable-http"}, code: exitOK, tools: 2, has: []string{"transport  http"}},
		{name: "SSE in capitals", cfg: probetest.Config{}, sse: true,
			flags: []string{"--transport", "SSE"}, code: exitOK, tools: 2, has: []string{"transport  sse"}},
		{name: "modern", cfg: probetest.Config{Era: probetest.EraModern}, code: exitOK, tools: 2, has: []string{"modern, protocol 2026-07-28"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kit := probetest.NewServer(tc.cfg)
			var h http.Handler = kit
			if tc.sse {
				h = kit.SSE()
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer kit.Close()
			env := map[string]string{"HTTP_TOKEN": token}
			args := append([]string{"probe", "--url", srv.URL + "/mcp?key=query-secret"}, tc.flags...)
			code, text, stderr := runCLI(t, env, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, text, stderr)
			}
			for _, want := range tc.has {
				if !strings.Contains(text, want) {
					t.Errorf("text output lacks %q:\n%s", want, text)
				}
			}
			_, out, _ := runCLI(t, env, append([]string{"probe", "--format", "json"}, args[1:]...)...)
			r := decodeProbeJSON(t, out)
			if r.Reason != tc.reason || len(r.Tools) != tc.tools {
				t.Errorf("json %+v", r)
			}
			for _, secret := range []string{token, "query-secret"} {
				if strings.Contains(text, secret) || strings.Contains(out, secret) {
					t.Errorf("output shows %q:\n%s\n%s", secret, text, out)
				}
			}
		})
	}
}

// isZombie: a dead process that init has not reaped yet (orphans are init's
// to reap, on its own schedule).
func isZombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone meanwhile
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// The Python report server answers initialize with 2026-07-28
// and lists its tools the legacy way. mcpwatch must still read its surface,
// and say what was odd about it.
func TestProbeSeedReportServer(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	server := []string{"--", python, "testdata/seed/report_server.py"}
	for _, tc := range []struct {
		name  string
		flags []string
		tools int
	}{
		{"with the token", []string{"--env", "REPORT_API_TOKEN=seed-token"}, 2},
		{"without the token", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The deadline is a bound only: the server answers, but Python
			// (often behind a version manager's shim) can take many seconds
			// to start on a loaded machine.
			args := append(append([]string{"probe", "--format", "json", "--timeout", "2m"}, tc.flags...), server...)
			code, out, stderr := runCLI(t, nil, args...)
			r := decodeProbeJSON(t, out)
			if code != exitOK || !r.OK || len(r.Tools) != tc.tools || r.Era != "legacy" || r.ProtocolVersion != "2026-07-28" {
				t.Fatalf("exit %d, json %+v\n%s", code, r, stderr)
			}
			if !strings.Contains(out, "not an initialize-era version") {
				t.Errorf("no warning about the version in %s", out)
			}
		})
	}
}

// A server that prints its credential on stderr before it dies must not
// have mcpwatch print it again.
// What the server says back, and errors that name the URL, are scrubbed of
// the secrets this probe sent: env values, and what references put into the
// arguments and the URL.
func TestProbeScrubsEchoedSecret(t *testing.T) {
	t.Parallel()
	const secret = "echoed-s3cret-value"
	tests := []struct {
		name     string
		args     []string
		scrubbed string // in the text output
	}{
		{"env on stderr", []string{"--env", "REPORT_API_TOKEN=${ECHO_TOKEN}", "--", "sh", "-c", `echo "token is $REPORT_API_TOKEN" >&2; exit 3`}, "token is <redacted>"},
		{"argument on stderr", []string{"--", "sh", "-c", `echo "bad flag $0" >&2; exit 3`, "--api-key=${ECHO_TOKEN}"}, "bad flag --api-key=<redacted>"},
		{"key in the URL path", []string{"--url", "http://127.0.0.1:1/${ECHO_TOKEN}/mcp", "--transport", "http"}, "http://127.0.0.1:1/<redacted>/mcp"},
	}
	for _, tc := range tests {
		for _, output := range []string{"text", "json"} {
			t.Run(tc.name+"/"+output, func(t *testing.T) {
				code, out, stderr := runCLI(t, map[string]string{"ECHO_TOKEN": secret}, append([]string{"probe", "--format", output}, tc.args...)...)
				if code != exitFailed {
					t.Fatalf("exit %d\n%s%s", code, out, stderr)
				}
				if strings.Contains(out+stderr, secret) {
					t.Errorf("the output shows the secret:\n%s%s", out, stderr)
				}
				if output == "text" && !strings.Contains(out, tc.scrubbed) {
					t.Errorf("the output lacks %q:\n%s", tc.scrubbed, out)
				}
			})
		}
	}
}

// ${VAR} reads the environment the cli was given and nothing else: a
// variable set there but empty is set (the probe goes on), and one set only
// in the test process is unset (a config failure).
func TestProbeExpandsFromTheGivenEnvironmentOnly(t *testing.T) {
	t.Setenv("MCPWATCH_TEST_PROCESS_ONLY", "from-the-process")
	tests := []struct {
		name   string
		env    map[string]string
		ref    string
		reason string
	}{
		{"set but empty", map[string]string{"EMPTY": ""}, "${EMPTY}", "spawn_failed"},
		{"set only in the process", nil, "${MCPWATCH_TEST_PROCESS_ONLY}", "config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stdout, _ := runCLI(t, tc.env, "probe", "--format", "json", "--env", "X="+tc.ref, "--", "/nonexistent/mcp-server")
			if got := decodeProbeJSON(t, stdout); got.Reason != tc.reason {
				t.Errorf("reason %q (%s), want %q", got.Reason, got.Error, tc.reason)
			}
		})
	}
}

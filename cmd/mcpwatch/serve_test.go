package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestServeRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yml")
	if err := os.WriteFile(broken, []byte("servers:\n  x:\n    comand: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yml")
	if err := os.WriteFile(good, []byte("servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badWeb := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(badWeb, []byte("tls_server_config:\n  cert_file: /nonexistent/cert.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown flag", []string{"serve", "--nope"}, exitUsage, []string{"unknown flag: --nope"}},
		{"bad log format", []string{"serve", "--log.format", "xml"}, exitUsage, []string{"use logfmt or json"}},
		{"bad history", []string{"serve", "--probe.history", "0"}, exitUsage, []string{"at least 1"}},
		{"missing config", []string{"serve", "-c", filepath.Join(dir, "absent.yml")}, exitConfig, []string{"absent.yml", "Create it"}},
		{"broken config", []string{"serve", "--config.file", broken}, exitConfig, []string{"servers.x.comand", "did you mean command?"}},
		{"broken web config", []string{"serve", "-c", good, "--web.config.file", badWeb}, exitConfig, []string{"web.yml", "unusable"}},
		{"relative external URL", []string{"serve", "-c", good, "--web.external-url", "/mcpwatch"}, exitUsage, []string{"--web.external-url", "absolute http or https URL"}},
		{"no systemd socket", []string{"serve", "-c", good, "--web.systemd-socket"}, exitFailed, []string{"systemd passed no socket", "drop --web.systemd-socket"}},
		{"unusable listen address", []string{"serve", "-c", good, "--web.listen-address", "256.0.0.1:1"}, exitFailed, []string{"cannot serve HTTP"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// logLines collects a process's JSON log lines as they come.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   strings.Builder
}

func (l *logLines) read(r io.Reader) {
	// Whatever stops the scan, the writer must never block on a full pipe.
	defer func() { _, _ = io.Copy(io.Discard, r) }()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m map[string]any
		_ = json.Unmarshal(sc.Bytes(), &m)
		l.mu.Lock()
		l.lines = append(l.lines, m)
		l.raw.Write(sc.Bytes())
		l.raw.WriteByte('\n')
		l.mu.Unlock()
	}
}

// readLogs returns the log lines written to w, read as they come (for a
// child's stderr not StderrPipe: Wait closes that before the last lines are
// read, while Wait returns once every byte is copied into w). done closes
// w and waits for the last line; it runs at the latest in the test's
// cleanup, which then prints the log of a failed test.
func readLogs(t *testing.T) (logs *logLines, w io.WriteCloser, done func()) {
	r, pw := io.Pipe()
	logs = &logLines{}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		logs.read(r)
	}()
	done = sync.OnceFunc(func() {
		_ = pw.Close()
		<-readDone
	})
	t.Cleanup(func() {
		done()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs)
		}
	})
	return logs, pw, done
}

// find returns the first line with that message.
func (l *logLines) find(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.lines {
		if m["msg"] == msg {
			return m, true
		}
	}
	return nil, false
}

func (l *logLines) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.lines {
		if m["msg"] == msg {
			n++
		}
	}
	return n
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String()
}

// metricsURL waits for the daemon's "serving" line and returns the
// address of /metrics it names.
func (l *logLines) metricsURL(t *testing.T) string {
	t.Helper()
	var url string
	waitUntil(t, "the serving log line", func() bool {
		m, ok := l.find("mcpwatch is serving")
		if ok {
			url, _ = m["metrics"].(string)
		}
		return ok
	})
	return url
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hasSample reports whether a scrape holds the sample line, whole: a
// substring would also match the HELP text ("..._successful 1 if ...").
func hasSample(scrape, line string) bool {
	return strings.Contains("\n"+scrape, "\n"+line+"\n")
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The built binary, as an operator runs it: serves, reloads on SIGHUP
// (keeping the running configuration when the file is broken), and exits 0
// on SIGTERM within its bound, leaving no server process behind.
func TestServeBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := "mcpwatch-serve-test-" + rand.Text()
	path, args, env := probetest.Command(probetest.Config{Behavior: probetest.TokenGated})
	env["REPORT_API_TOKEN"] = "${file:token}"
	env["LEAK_MARKER"] = marker
	server := map[string]any{"command": path, "args": args, "env": env}
	writeConfig := func(servers map[string]any) {
		doc, err := json.Marshal(map[string]any{
			"defaults": map[string]any{"schedule": "@every 200ms"},
			"servers":  servers,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(map[string]any{"report": server, "other": server})
	for name, data := range map[string]string{
		"token":               "example-token\n",
		"mcp-tools.lock.json": `{"report": ["fetch_daily_report", "list_report_dates"]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(mcpwatchBin, "serve", "-c", filepath.Join(dir, "mcpwatch.yml"),
		"--web.listen-address", "127.0.0.1:0", "--log.format", "json")
	logs, logW, logDone := readLogs(t)
	cmd.Stderr = logW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	metricsURL := logs.metricsURL(t)
	waitUntil(t, "report to be probed ok", func() bool {
		return strings.Contains(scrape(t, metricsURL), `mcpwatch_tools_missing{server="report"} 0`)
	})

	// A broken file and SIGHUP: the old configuration keeps running.
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte("servers: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the failed reload", func() bool {
		return hasSample(scrape(t, metricsURL), "mcpwatch_config_last_reload_successful 0")
	})
	if m := scrape(t, metricsURL); !strings.Contains(m, `server="other"`) {
		t.Errorf("a failed reload dropped a running server")
	}

	// Fixed, without "other": its series are gone at once.
	writeConfig(map[string]any{"report": server})
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the good reload", func() bool {
		return hasSample(scrape(t, metricsURL), "mcpwatch_config_last_reload_successful 1")
	})
	if m := scrape(t, metricsURL); strings.Contains(m, `server="other"`) {
		t.Errorf("/metrics still has series of the removed server:\n%s", m)
	}

	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	exited = true
	took := time.Since(began)
	if err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0", err)
	}
	// Exit 0 says the shutdown kept its 5 s bound (past it, serve fails);
	// the wall time only guards against a hang after it, generously.
	if took > 20*time.Second {
		t.Errorf("exit took %s after SIGTERM", took)
	}
	logDone()
	if n := logs.count("mcpwatch stopped"); n != 1 {
		t.Errorf("%d 'mcpwatch stopped' lines", n)
	}
	if strings.Contains(logs.String(), "example-token") {
		t.Errorf("the log holds the token")
	}
	// One format: the exporter toolkit's lines (through slog) carry the
	// same fields as the daemon's own (zap), caller included.
	if m, ok := logs.find("Listening on"); !ok || m["logger"] != "web" {
		t.Errorf("no exporter-toolkit line from logger web: %v", m)
	}
	logs.mu.Lock()
	for _, m := range logs.lines {
		for _, key := range []string{"ts", "level", "caller", "msg"} {
			if s, _ := m[key].(string); s == "" {
				t.Errorf("a log line without %s: %v", key, m)
			}
		}
	}
	logs.mu.Unlock()
	if pids := processesWith(t, marker); len(pids) > 0 {
		t.Errorf("server processes left behind: %v", pids)
	}
}

// processesWith lists live processes whose environment holds marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []string
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), marker) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		pids = append(pids, e.Name())
	}
	return pids
}

// serveInProcess runs 'mcpwatch serve' in this process with env as its
// whole environment, on a free loopback port, until the test ends; then it
// checks that the daemon stopped with exit 0. It returns the base URL.
func serveInProcess(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	base, _ := serveLogged(t, env, args...)
	return base
}

// serveLogged is serveInProcess that also hands back the daemon's log.
func serveLogged(t *testing.T, env map[string]string, args ...string) (string, *logLines) {
	t.Helper()
	logs, logW, _ := readLogs(t)
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		args = append([]string{"serve", "--web.listen-address", "127.0.0.1:0", "--log.format", "json"}, args...)
		exit <- run(ctx, testCLI(io.Discard, logW, env), args)
		logW.Close()
	}()
	exited := false
	t.Cleanup(func() {
		cancel()
		if !exited {
			if code := <-exit; code != exitOK {
				t.Errorf("serve exited %d after its context ended, want 0", code)
			}
		}
	})
	var url string
	waitUntil(t, "the serving log line", func() bool {
		select {
		case code := <-exit:
			exited = true
			t.Fatalf("serve exited %d before serving", code)
		default:
		}
		m, ok := logs.find("mcpwatch is serving")
		if ok {
			url, _ = m["metrics"].(string)
		}
		return ok
	})
	return strings.TrimSuffix(url, "/metrics"), logs
}

// apiServer is what these tests read of /api/v1/servers/NAME.
type apiServer struct {
	State  string `json:"state"`
	Reason string `json:"reason"`
	Error  string `json:"error"`
	Probes int    `json:"probes"`
	Diff   struct {
		Locked  bool     `json:"locked"`
		Missing []string `json:"missing"`
	} `json:"diff"`
}

// firstProbe waits for the first probe of a server to end and returns it.
func firstProbe(t *testing.T, base, server string) apiServer {
	t.Helper()
	var st apiServer
	waitUntil(t, "the first probe of "+server, func() bool {
		body := scrape(t, base+"/api/v1/servers/"+server)
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		return st.Probes > 0
	})
	return st
}

// tokenGatedServer is a config entry for a probetest stdio server that
// lists its tools only with REPORT_API_TOKEN set to token (as written: it
// may be a reference).
func tokenGatedServer(token string) map[string]any {
	path, args, env := probetest.Command(probetest.Config{Behavior: probetest.TokenGated})
	env["REPORT_API_TOKEN"] = token
	return map[string]any{"command": path, "args": args, "env": env}
}

// The daemon expands ${VAR} from the environment the cli was given, as
// probe and check do, so tests and wrappers can hand it one.
func TestServeExpandsFromTheGivenEnvironment(t *testing.T) {
	t.Parallel()
	config := writeJSON(t, t.TempDir(), "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"report": tokenGatedServer("${INJECTED_TOKEN}"),
	}})
	base := serveInProcess(t, map[string]string{"INJECTED_TOKEN": "injected-token"}, "-c", config)
	if st := firstProbe(t, base, "report"); st.State != "ok" {
		t.Errorf("report is %s (%s: %s), want ok with the token from the given environment", st.State, st.Reason, st.Error)
	}
}

// serve -c takes a client config as check does: the daemon watches the
// agent's own .mcp.json, with the lock $MCP_TOOL_LOCK names.
func TestServeWatchesAClientConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": tokenGatedServer("example-token")}))
	lock := writeJSON(t, dir, "tools.lock", map[string]any{"report": []string{"fetch_daily_report", "list_report_dates", "gone_tool"}})
	base := serveInProcess(t, map[string]string{"MCP_TOOL_LOCK": lock}, "-c", config)
	st := firstProbe(t, base, "report")
	if st.State != "missing" || !st.Diff.Locked || !slices.Equal(st.Diff.Missing, []string{"gone_tool"}) {
		t.Errorf("report is %s (%s: %s), diff %+v; want gone_tool missing against the lock", st.State, st.Reason, st.Error, st.Diff)
	}
}

// Every command chooses the configuration and its lock the same way
// (config.Discover): the mcpwatch.yml $MCP_CONFIG names, with the lock
// $MCP_TOOL_LOCK names, for config check as for serve.
func TestServeAndConfigCheckChooseTheSameConfiguration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "w", "mcpwatch.yml")
	writeTestFile(t, file, "servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n")
	lock := filepath.Join(dir, "ci.lock.json")
	env := map[string]string{"MCP_CONFIG": file, "MCP_TOOL_LOCK": lock}

	code, stdout, stderr := runCLI(t, env, "config", "check", "--format", "json")
	var rep struct{ Config, Lock string }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
		t.Fatalf("config check: exit %d, %v; stderr:\n%s", code, err, stderr)
	}
	if rep.Config != file || rep.Lock != lock {
		t.Errorf("config check read %s with the lock %s, want %s with %s", rep.Config, rep.Lock, file, lock)
	}

	_, logs := serveLogged(t, env)
	// serveLogged returns at "mcpwatch is serving"; "watching" follows it.
	var m map[string]any
	waitUntil(t, "the watching log line", func() bool {
		var ok bool
		m, ok = logs.find("watching")
		return ok
	})
	if m["config"] != file || m["lock"] != lock {
		t.Errorf("serve watches %v with the lock %v, want %s with %s", m["config"], m["lock"], file, lock)
	}
}

package main

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &logLines{}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		logs.read(stderr)
	}()
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		<-readDone
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs)
		}
	}()

	var metricsURL string
	waitUntil(t, "the serving log line", func() bool {
		m, ok := logs.find("mcpwatch is serving")
		if ok {
			metricsURL, _ = m["metrics"].(string)
		}
		return ok
	})
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
		return strings.Contains(scrape(t, metricsURL), "mcpwatch_config_last_reload_successful 0")
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
		return strings.Contains(scrape(t, metricsURL), "mcpwatch_config_last_reload_successful 1")
	})
	if m := scrape(t, metricsURL); strings.Contains(m, `server="other"`) {
		t.Errorf("/metrics still has series of the removed server")
	}

	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	took := time.Since(began)
	if err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0", err)
	}
	if took > 5*time.Second {
		t.Errorf("exit took %s after SIGTERM, want under 5s", took)
	}
	<-readDone
	if n := logs.count("mcpwatch stopped"); n != 1 {
		t.Errorf("%d 'mcpwatch stopped' lines", n)
	}
	if strings.Contains(logs.String(), "example-token") {
		t.Errorf("the log holds the token")
	}
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

package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestMain(m *testing.M) {
	// A stdio test server is this binary, re-executed by probetest.Command.
	probetest.RunIfChild()
	goleak.VerifyTestMain(m)
}

// stdioServer is the config of a stdio test server; env adds to what the
// test server itself needs.
func stdioServer(cfg probetest.Config, env map[string]string) map[string]any {
	path, args, own := probetest.Command(cfg)
	for k, v := range env {
		own[k] = v
	}
	return map[string]any{"command": path, "args": args, "env": own}
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeConfig writes an mcpwatch.yml (as JSON, which YAML reads) into dir.
func writeConfig(t *testing.T, dir string, doc map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, "mcpwatch.yml", string(b))
}

// harness is a running daemon with its HTTP handler and its logs.
type harness struct {
	t    *testing.T
	d    *Daemon
	http *httptest.Server
	logs *observer.ObservedLogs
}

// start loads the config at path and starts a daemon on it. It is closed
// when the test ends.
func start(t *testing.T, path string, opts Options) *harness {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	if opts.Logger == nil {
		opts.Logger = zap.New(core)
	}
	if opts.FirstRoundSpread == 0 {
		opts.FirstRoundSpread = 50 * time.Millisecond
	}
	if opts.AddedSpread == 0 {
		opts.AddedSpread = 50 * time.Millisecond
	}
	d, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("new daemon: %v", err)
	}
	h := &harness{t: t, d: d, http: httptest.NewServer(d.Handler()), logs: logs}
	d.Start()
	t.Cleanup(func() {
		h.http.Close()
		if err := d.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

// get fetches a path of the daemon's HTTP handler.
func (h *harness) get(path string) (int, string) {
	h.t.Helper()
	resp, err := http.Get(h.http.URL + path)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

func (h *harness) post(path string) (int, string) {
	h.t.Helper()
	resp, err := http.Post(h.http.URL+path, "text/plain", nil)
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// status returns the status of a server through the JSON API.
func (h *harness) status(name string) apiServer {
	h.t.Helper()
	code, body := h.get("/api/v1/servers/" + name)
	if code != http.StatusOK {
		h.t.Fatalf("GET /api/v1/servers/%s: %d %s", name, code, body)
	}
	var a apiServer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		h.t.Fatalf("decode: %v\n%s", err, body)
	}
	return a
}

// waitFor polls cond until it holds, failing the test after a generous
// bound: a busy 2-core machine running -race is slow, and only the bound
// makes the test fail, never a tight timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, what, 20*time.Second, cond)
}

// waitForWithin is waitFor with its bound: for work that scales with the
// machine's load, such as hundreds of process spawns.
func waitForWithin(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState waits until the server's state is want and returns its status.
func (h *harness) waitState(name string, want verdict.State) apiServer {
	h.t.Helper()
	var last apiServer
	waitFor(h.t, "server "+name+" to be "+string(want), func() bool {
		last = h.status(name)
		return last.State == want
	})
	return last
}

// metricsText scrapes the real /metrics handler.
func (h *harness) metricsText() string {
	h.t.Helper()
	code, body := h.get("/metrics")
	if code != http.StatusOK {
		h.t.Fatalf("GET /metrics: %d", code)
	}
	return body
}

// messages returns the logged messages at info level or above that mention
// the server.
func (h *harness) messages(server string) []string {
	var out []string
	for _, e := range h.logs.All() {
		if e.Level < zapcore.InfoLevel {
			continue
		}
		if e.ContextMap()["server"] == server {
			out = append(out, e.Message)
		}
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

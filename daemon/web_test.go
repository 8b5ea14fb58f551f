package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// quietConfig is a configuration whose one server is never reached during
// a test (an hour-long schedule, a port nothing listens on).
func quietConfig(t *testing.T) string {
	t.Helper()
	return writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"x": map[string]any{"url": "http://127.0.0.1:1/mcp"}},
	})
}

// do sends a request to the harness with the given headers ("Host" sets the
// Host header) and returns the status and body.
func (h *harness) do(method, path string, header map[string]string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// POST /-/reload is off unless the lifecycle API is enabled, as in
// Prometheus.
func TestReloadNeedsLifecycleFlag(t *testing.T) {
	path := quietConfig(t)
	h := start(t, path, Options{})
	if code, body := h.post("/-/reload"); code != http.StatusForbidden || !strings.Contains(body, "--web.enable-lifecycle") {
		t.Errorf("POST /-/reload without the lifecycle flag = %d %q, want 403 naming --web.enable-lifecycle", code, body)
	}
	if n := count(h.allMessages(), "configuration reloaded"); n != 0 {
		t.Errorf("the configuration was reloaded %d times", n)
	}
	h = start(t, path, Options{EnableLifecycle: true})
	if code, body := h.post("/-/reload"); code != http.StatusOK {
		t.Errorf("POST /-/reload with the lifecycle flag = %d %q, want 200", code, body)
	}
}

// A browser's cross-origin POST cannot reload; a same-origin one and a
// client that is no browser can.
func TestReloadRefusesCrossOrigin(t *testing.T) {
	h := start(t, quietConfig(t), Options{EnableLifecycle: true})
	self := strings.TrimPrefix(h.http.URL, "http://")
	for _, tc := range []struct {
		name   string
		header map[string]string
		code   int
	}{
		{"another origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other." + self}, http.StatusForbidden},
		{"same origin", map[string]string{"Origin": "http://" + self, "Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"old browser, same origin", map[string]string{"Origin": "http://" + self}, http.StatusOK},
		{"curl", nil, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count(h.allMessages(), "configuration reloaded")
			code, body := h.do("POST", "/-/reload", tc.header)
			if code != tc.code {
				t.Fatalf("POST /-/reload with %v = %d %q, want %d", tc.header, code, body, tc.code)
			}
			reloaded := count(h.allMessages(), "configuration reloaded") - before
			if want := map[bool]int{true: 1, false: 0}[tc.code == http.StatusOK]; reloaded != want {
				t.Errorf("reloaded %d times, want %d", reloaded, want)
			}
		})
	}
}

// An <img src=".../probe?server=x"> on another site cannot start a probe.
func TestProbeRefusesCrossSite(t *testing.T) {
	h := start(t, quietConfig(t), Options{})
	code, body := h.do("GET", "/probe?server=x", map[string]string{"Sec-Fetch-Site": "cross-site"})
	if code != http.StatusForbidden {
		t.Errorf("cross-site GET /probe = %d %q, want 403", code, body)
	}
	// The first round's probe may end at any time; a probe the request
	// had started would have ended before the answer (a /probe waits for
	// its probe), with the request's trigger.
	for _, r := range h.status("x").History {
		if r.Trigger == triggerRequest {
			t.Errorf("a probe ran for the refused request: %+v", r)
		}
	}
}

// On loopback, a Host header that names neither an address, localhost nor
// the external URL is refused (DNS rebinding); on another address it is
// not checked.
func TestHostCheck(t *testing.T) {
	external, _ := url.Parse("https://mcpwatch.example.org/watch")
	h := start(t, quietConfig(t), Options{ExternalURL: external})
	for _, tc := range []struct {
		host string
		code int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:9713", http.StatusMisdirectedRequest},
		{"127.0.0.1:9713", http.StatusOK},
		{"[::1]:9713", http.StatusOK},
		{"localhost:9713", http.StatusOK},
		{"LOCALHOST.", http.StatusOK},
		{"app.localhost", http.StatusOK},
		{"mcpwatch.example.org", http.StatusOK},
	} {
		code, body := h.do("GET", "/watch/api/v1/servers", map[string]string{"Host": tc.host})
		if code != tc.code {
			t.Errorf("GET with Host %q = %d, want %d: %s", tc.host, code, tc.code, body)
		}
	}

	d := h.d
	req, _ := http.NewRequest("GET", "http://evil.example/", nil)
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 9713}))
	if !d.hostAllowed(req) {
		t.Errorf("a request on a non-loopback address was refused for its Host")
	}
}

// serveReal runs Serve on a loopback listener and returns its address; the
// daemon stops when the test ends.
func serveReal(t *testing.T, opts Options) string {
	t.Helper()
	h := start(t, quietConfig(t), opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Serve(ctx, []net.Listener{l}, "") }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String()
}

// waitClosed reads conn until the server closes it, failing after a bound
// far above the timeouts under test.
func waitClosed(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// An idle keep-alive connection is closed after IdleTimeout, and one that
// never finishes its headers after ReadHeaderTimeout.
func TestHTTPServerTimeouts(t *testing.T) {
	addr := serveReal(t, Options{IdleTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond})

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = idle.Close() }()
	if _, err := io.WriteString(idle, "GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.Close {
		t.Fatalf("the server did not keep the connection alive")
	}
	waitClosed(t, idle, "idle keep-alive connection")

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = slow.Close() }()
	if _, err := io.WriteString(slow, "GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, slow, "connection with unfinished headers")
}

// The defaults are set: a server built without options still bounds idle
// connections.
func TestHTTPServerDefaults(t *testing.T) {
	d, err := New(mustLoad(t, quietConfig(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close(context.Background()) }()
	srv := d.newHTTPServer()
	if srv.IdleTimeout != defaultIdleTimeout || srv.ReadHeaderTimeout != defaultReadHeaderTimeout || srv.ReadTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("server bounds: idle %s, read header %s, read %s, max header bytes %d",
			srv.IdleTimeout, srv.ReadHeaderTimeout, srv.ReadTimeout, srv.MaxHeaderBytes)
	}
}

func mustLoad(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// allMessages returns every logged message at info level or above.
func (h *harness) allMessages() []string {
	var out []string
	for _, e := range h.logs.FilterLevelExact(zapcore.InfoLevel).All() {
		out = append(out, e.Message)
	}
	return out
}

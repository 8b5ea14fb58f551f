package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
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

// An <img src=".../probe?server=x"> on another site cannot start a probe:
// a request a browser marks as cross-site or same-site (Sec-Fetch-Site),
// or, from a browser that sends no Sec-Fetch-Site, one whose Origin is not
// the daemon's host, is refused before it probes. Prometheus, curl and the
// daemon's own pages pass.
func TestProbeRefusesCrossSite(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"x": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		for _, tc := range []struct {
			name   string
			header map[string]string
			code   int
		}{
			{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{"same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other.example.com"}, http.StatusForbidden},
			{"old browser, another origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
			{"old browser, another port", map[string]string{"Origin": "http://example.com:8080"}, http.StatusForbidden},
			{"old browser, opaque origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
			{"same origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}, http.StatusOK},
			{"old browser, same origin", map[string]string{"Origin": "http://EXAMPLE.com"}, http.StatusOK},
			{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusOK},
			{"Prometheus or curl", nil, http.StatusOK},
		} {
			before := fake.get("x").probes
			req := httptest.NewRequest("GET", "/probe?server=x", nil) // Host: example.com
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.handler.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Errorf("%s: GET /probe = %d %q, want %d", tc.name, rec.Code, rec.Body, tc.code)
			}
			if probed := fake.get("x").probes - before; (probed == 1) != (tc.code == http.StatusOK) {
				t.Errorf("%s: %d probes made for the request", tc.name, probed)
			}
		}
	})
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

// pipeListener is a net.Listener of in-memory connections (net.Pipe): a
// synctest bubble has no network, and a pipe's deadlines run on the
// bubble's clock.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the listener; the caller closes the connection.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// closedWithin reads conn until the server closes it, and reports whether
// that happened within limit on the bubble's clock.
func closedWithin(conn net.Conn, limit time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, conn)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// An idle keep-alive connection is closed after IdleTimeout, and one that
// never finishes its headers after ReadHeaderTimeout: Serve, on the
// bubble's clock.
func TestHTTPServerTimeouts(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"x": fakeServerConfig(nil)},
		}, newFakeProber(), Options{IdleTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond})
		l := newPipeListener()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.d.Serve(ctx, []net.Listener{l}, nil) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}()

		idle := l.dial()
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
		began := time.Now()
		if !closedWithin(idle, time.Minute) {
			t.Errorf("idle keep-alive connection: the server kept it open")
		} else if took := time.Since(began); took < 200*time.Millisecond || took > time.Second {
			t.Errorf("idle keep-alive connection closed after %s, want its IdleTimeout, 200ms", took)
		}

		slow := l.dial()
		defer func() { _ = slow.Close() }()
		began = time.Now()
		if _, err := io.WriteString(slow, "GET /-/healthy HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		if !closedWithin(slow, time.Minute) {
			t.Errorf("connection with unfinished headers: the server kept it open")
		} else if took := time.Since(began); took < 200*time.Millisecond || took > time.Second {
			t.Errorf("connection with unfinished headers closed after %s, want its ReadHeaderTimeout, 200ms", took)
		}
	})
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

package probe

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file drive the streamable HTTP conn directly against
// small httptest handlers that misbehave in one precise way each; the
// end-to-end tests through Run use the probetest kit.

// secretValue is sent as a configured header in every test here; no error
// message may ever contain it.
const secretValue = "s3cret-header-value"

// rpcServer starts a server whose handler gets each POSTed JSON-RPC message
// decoded (nil for other methods or undecodable bodies).
func rpcServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, m *message)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(rpcHandler(h))
	t.Cleanup(srv.Close)
	return srv
}

func rpcHandler(h func(w http.ResponseWriter, r *http.Request, m *message)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m *message
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var decoded message
			if json.Unmarshal(body, &decoded) == nil {
				m = &decoded
			}
		}
		h(w, r, m)
	})
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func resultFor(m *message, result string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}

// testConn builds a streamable HTTP conn to url with the secret header set,
// closed when the test ends.
func testConn(t *testing.T, target Target, opts Options) *httpConn {
	t.Helper()
	if target.Headers == nil {
		target.Headers = map[string]string{"Authorization": "Bearer " + secretValue}
	}
	c, err := newHTTPConn(target, opts.WithDefaults(), &observer{start: time.Now(), transcript: true})
	if err != nil {
		t.Fatalf("newHTTPConn(%s): %v", target.URL, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.close(ctx)
	})
	return c
}

// returnedBy is the generous bound for a call or probe that must end at
// its deadline d: ten times d, at least 5 s more. It tells "the deadline is
// enforced" from "it is not" (the servers of these tests never answer, or
// take far longer), and no load on a shared 2-core machine running -race
// stretches a deadline that much; a window close to d would.
func returnedBy(d time.Duration) time.Duration { return max(10*d, d+5*time.Second) }

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// outcome is what a test reads from an error: the reason (rpc_error for an
// *RPCError), the HTTP status and the JSON-RPC code.
type outcome struct {
	reason Reason
	status int
	code   int
}

func outcomeOf(err error) outcome {
	var (
		f      *Failure
		rpcErr *RPCError
	)
	switch {
	case errors.As(err, &f):
		return outcome{reason: f.Reason, status: f.HTTPStatus}
	case errors.As(err, &rpcErr):
		return outcome{reason: ReasonRPCError, status: rpcErr.HTTPStatus, code: rpcErr.Code}
	case err == nil:
		return outcome{}
	}
	return outcome{reason: "untyped: " + Reason(err.Error())}
}

func checkMessage(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if msg := err.Error(); strings.Contains(msg, secretValue) || strings.Contains(msg, "\n") {
		t.Errorf("error message leaks a header value or spans lines: %q", msg)
	}
}

func TestHTTPStatusMapping(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		challenge   string
		retryAfter  string
		body        string
		want        outcome
		wantErr     string // the error message contains it
		notInErr    string // and does not contain this
		wantCh      *Challenge
	}{
		{
			name: "401 with a challenge", status: 401, challenge: `Bearer resource_metadata="https://h/.well-known/oauth-protected-resource", scope="reports:read"`,
			want: outcome{reason: ReasonUnauthorized, status: 401}, wantErr: `scope="reports:read"`,
			wantCh: &Challenge{Scheme: "Bearer", Scope: "reports:read", ResourceMetadata: "https://h/.well-known/oauth-protected-resource"},
		},
		{
			name: "401 without a challenge", status: 401, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"no"}}`, contentType: "application/json",
			want: outcome{reason: ReasonUnauthorized, status: 401}, wantErr: "no WWW-Authenticate",
		},
		{
			name: "403 insufficient scope", status: 403, challenge: `Bearer error="insufficient_scope", scope="reports:write"`,
			want: outcome{reason: ReasonForbidden, status: 403}, wantErr: "insufficient scope",
			wantCh: &Challenge{Scheme: "Bearer", Error: "insufficient_scope", Scope: "reports:write"},
		},
		{
			name: "403 from an Origin check", status: 403, contentType: "application/json",
			body: `{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad origin"}}`,
			want: outcome{reason: ReasonForbidden, status: 403}, wantErr: "without an insufficient_scope challenge",
		},
		{
			name: "500 page: one line of it", status: 500, contentType: "text/html",
			body: "\n  upstream exploded  \nsecond line with detail\n" + strings.Repeat("x", 10_000),
			want: outcome{reason: ReasonHTTPStatus, status: 500}, wantErr: "upstream exploded", notInErr: "second line",
		},
		{
			name: "500 with a long first line: cut", status: 500, body: strings.Repeat("y", 5000),
			want: outcome{reason: ReasonHTTPStatus, status: 500}, notInErr: strings.Repeat("y", 200),
		},
		{
			name: "400 legacy session error is an RPC error with its status", status: 400, contentType: "application/json",
			body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`,
			want: outcome{reason: ReasonRPCError, status: 400, code: -32000},
		},
		{
			name: "404 method not found, modern", status: 404, contentType: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`,
			want: outcome{reason: ReasonRPCError, status: 404, code: -32601},
		},
		{
			name: "429 says when to ask again", status: 429, retryAfter: "120", body: "slow down",
			want: outcome{reason: ReasonHTTPStatus, status: 429}, wantErr: "HTTP 429 Too Many Requests (Retry-After: 120): slow down",
		},
		{
			name: "429 with a Retry-After that is not one", status: 429, retryAfter: "soon",
			want: outcome{reason: ReasonHTTPStatus, status: 429}, notInErr: "Retry-After",
		},
		{
			name: "405 empty", status: 405,
			want: outcome{reason: ReasonHTTPStatus, status: 405}, wantErr: "HTTP 405 Method Not Allowed",
		},
		{
			name: "200 with an RPC error keeps the 200", status: 200, contentType: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad cursor"}}`,
			want: outcome{reason: ReasonRPCError, status: 200, code: -32602},
		},
		{
			name: "200 not JSON", status: 200, contentType: "application/json", body: "<html>",
			want: outcome{reason: ReasonProtocol}, wantErr: "not a JSON-RPC message",
		},
		{
			name: "200 wrong id", status: 200, contentType: "application/json", body: `{"jsonrpc":"2.0","id":99,"result":{}}`,
			want: outcome{reason: ReasonProtocol}, wantErr: "id 99",
		},
		{
			name: "200 batch", status: 200, contentType: "application/json", body: `[{"jsonrpc":"2.0","id":1,"result":{}}]`,
			want: outcome{reason: ReasonProtocol}, wantErr: "batch",
		},
		{
			name: "200 neither result nor error", status: 200, contentType: "application/json", body: `{"jsonrpc":"2.0","id":1}`,
			want: outcome{reason: ReasonProtocol}, wantErr: "neither result nor error",
		},
		{
			name: "200 html", status: 200, contentType: "text/html", body: "<html></html>",
			want: outcome{reason: ReasonProtocol}, wantErr: `"text/html"`,
		},
		{
			name: "202 to a request", status: 202,
			want: outcome{reason: ReasonProtocol}, wantErr: "notification",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
				if tt.challenge != "" {
					w.Header().Set("WWW-Authenticate", tt.challenge)
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			c := testConn(t, Target{URL: srv.URL + "/mcp?key=" + secretValue}, Options{})
			_, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil)
			if got := outcomeOf(err); got != tt.want {
				t.Fatalf("outcome = %+v (%v), want %+v", got, err, tt.want)
			}
			checkMessage(t, err)
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if tt.notInErr != "" && strings.Contains(err.Error(), tt.notInErr) {
				t.Errorf("error %q contains %q", err, tt.notInErr)
			}
			var f *Failure
			var ch *Challenge
			if errors.As(err, &f) {
				ch = f.Challenge
			}
			if (ch == nil) != (tt.wantCh == nil) || (ch != nil && *ch != *tt.wantCh) {
				t.Errorf("challenge = %+v, want %+v", ch, tt.wantCh)
			}
		})
	}
}

func TestHTTPTransportFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()

	hangup := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name   string
		url    string
		ctx    context.Context
		reason Reason
	}{
		{"connection refused", refused, context.Background(), ReasonConnection},
		{"closed without a response", hangup.URL, context.Background(), ReasonClosed},
		{"caller canceled", hangup.URL, canceled, ReasonCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConn(t, Target{URL: tt.url}, Options{})
			_, err := c.call(tt.ctx, "tools/list", nil)
			if got := outcomeOf(err).reason; got != tt.reason {
				t.Fatalf("reason = %q (%v), want %q", got, err, tt.reason)
			}
			checkMessage(t, err)
		})
	}
}

// TestHTTPBadTargets: a target that cannot be built fails at construction
// with reason config, before any I/O.
func TestHTTPBadTargets(t *testing.T) {
	tests := []struct {
		name   string
		target Target
	}{
		{"not a URL", Target{URL: "http://[::1"}},
		{"wrong scheme", Target{URL: "ftp://127.0.0.1/mcp"}},
		{"CA file named but not read", Target{URL: "https://127.0.0.1/mcp", CAFile: filepath.Join(t.TempDir(), "none.pem")}},
		{"CA without PEM", Target{URL: "https://127.0.0.1/mcp", CAFile: "ca.pem", CA: []byte("not a certificate")}},
		{"header value with a line break", Target{URL: "http://127.0.0.1/mcp", Headers: map[string]string{"Authorization": "Bearer a\r\nX-Evil: 1"}}},
		{"header name with a space", Target{URL: "http://127.0.0.1/mcp", Headers: map[string]string{"Bad Name": "v"}}},
		{"a bad port, a secret in the query", Target{URL: "http://127.0.0.1:port/mcp?key=" + secretValue}},
		{"a bad escape, a secret in the user info", Target{URL: "http://user:" + secretValue + "%zz@127.0.0.1/mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newHTTPConn(tt.target, Options{}.WithDefaults(), &observer{start: time.Now()})
			if got := outcomeOf(err).reason; got != ReasonConfig {
				t.Fatalf("reason = %q (%v), want config", got, err)
			}
			checkMessage(t, err)
		})
	}
}

func TestHTTPTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(rpcHandler(func(w http.ResponseWriter, r *http.Request, m *message) {
		writeJSON(w, 200, resultFor(m, `{"ok":true}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	// httptest's certificate names 127.0.0.1 and example.com, not localhost.
	wrongHost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		name    string
		target  Target
		reason  Reason
		wantErr string
	}{
		{"unknown authority", Target{URL: srv.URL}, ReasonTLS, "unknown authority"},
		{"CA file", Target{URL: srv.URL, CAFile: "ca.pem", CA: ca}, ReasonNone, ""},
		{"CA file, wrong host name", Target{URL: wrongHost, CAFile: "ca.pem", CA: ca}, ReasonTLS, "not valid for host"},
		{"insecure", Target{URL: srv.URL, InsecureSkipVerify: true}, ReasonNone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConn(t, tt.target, Options{})
			_, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil)
			if got := outcomeOf(err).reason; got != tt.reason {
				t.Fatalf("reason = %q (%v), want %q", got, err, tt.reason)
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

// hopServer redirects /hop/N to /hop/N-1 with a 307 and answers at
// /hop/0; /found redirects there with a 302, which would turn a POST into
// a GET.
func hopServer(t *testing.T) *httptest.Server {
	return rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		if r.URL.Path == "/found" {
			http.Redirect(w, r, "/hop/0", http.StatusFound)
			return
		}
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err != nil || m == nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusTemporaryRedirect)
			return
		}
		writeJSON(w, 200, resultFor(m, `{}`))
	})
}

func TestHTTPRedirectBound(t *testing.T) {
	srv := hopServer(t)
	tests := []struct {
		name      string
		path      string
		redirects int
		want      outcome
	}{
		{"three hops, default limit", "/hop/3", 0, outcome{}},
		{"four hops, default limit", "/hop/4", 0, outcome{reason: ReasonHTTPStatus, status: 307}},
		{"one hop, limit one", "/hop/1", 1, outcome{}},
		{"one hop, redirects off", "/hop/1", -1, outcome{reason: ReasonHTTPStatus, status: 307}},
		{"a 302 would make the POST a GET", "/found", 0, outcome{reason: ReasonHTTPStatus, status: 302}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConn(t, Target{URL: srv.URL + tt.path}, Options{MaxRedirects: tt.redirects})
			_, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil)
			if got := outcomeOf(err); got != tt.want {
				t.Fatalf("outcome = %+v (%v), want %+v", got, err, tt.want)
			}
		})
	}
}

// TestHTTPCredentialsStayOnOrigin: configured headers follow a redirect on
// the target's origin, and never one to another origin.
func TestHTTPCredentialsStayOnOrigin(t *testing.T) {
	type seen struct{ auth, key string }
	var (
		mu  sync.Mutex
		got = map[string]seen{}
	)
	record := func(name string, r *http.Request) {
		mu.Lock()
		got[name] = seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")}
		mu.Unlock()
	}
	other := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		record("other origin", r)
		writeJSON(w, 200, resultFor(m, `{}`))
	})
	target := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		switch r.URL.Path {
		case "/away":
			record("target", r)
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			record("target", r)
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		default:
			record("same origin", r)
			writeJSON(w, 200, resultFor(m, `{}`))
		}
	})
	headers := map[string]string{"Authorization": "Bearer " + secretValue, "X-Api-Key": secretValue}
	for _, path := range []string{"/away", "/moved"} {
		c := testConn(t, Target{URL: target.URL + path, Headers: headers}, Options{})
		if _, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	want := map[string]seen{
		"target":       {"Bearer " + secretValue, secretValue},
		"same origin":  {"Bearer " + secretValue, secretValue},
		"other origin": {},
	}
	mu.Lock()
	defer mu.Unlock()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s saw %+v, want %+v", name, got[name], w)
		}
	}
}

func TestHTTPTooLarge(t *testing.T) {
	const limit = 1 << 20
	chunk := []byte(strings.Repeat("a", 32<<10))
	flood := func(w http.ResponseWriter, total int) {
		for written := 0; written < total; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client gave up, as it should
			}
		}
	}
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, m *message)
	}{
		{"JSON with a Content-Length over the cap", func(w http.ResponseWriter, r *http.Request, m *message) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(50<<20))
			flood(w, 50<<20)
		}},
		{"chunked JSON over the cap", func(w http.ResponseWriter, r *http.Request, m *message) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"`)
			flood(w, 50<<20)
		}},
		{"one event over the cap", func(w http.ResponseWriter, r *http.Request, m *message) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","id":1,"result":{"pad":"`)
			flood(w, 50<<20)
		}},
		{"an event of many lines over the cap", func(w http.ResponseWriter, r *http.Request, m *message) {
			w.Header().Set("Content-Type", "text/event-stream")
			line := "data: " + strings.Repeat("b", 1000) + "\n"
			for i := 0; i < 50_000; i++ {
				if _, err := io.WriteString(w, line); err != nil {
					return
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := rpcServer(t, tt.handler)
			c := testConn(t, Target{URL: srv.URL}, Options{MaxMessageBytes: limit})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := c.call(testCtx(t, 10*time.Second), "tools/list", nil)
			runtime.ReadMemStats(&after)
			if got := outcomeOf(err).reason; got != ReasonTooLarge {
				t.Fatalf("reason = %q (%v), want too_large", got, err)
			}
			// 50 MiB were offered; reading stops near the cap. The bound
			// is loose: the server side of the test allocates too.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("allocated %d MiB reading a body capped at 1 MiB", alloc>>20)
			}
		})
	}
}

// TestHTTPSlowBody: a body that drips one byte at a time, and never ends,
// still ends at the deadline, as JSON and as an event stream. Without the
// deadline the call would not return at all, so the bound can be generous.
func TestHTTPSlowBody(t *testing.T) {
	for _, contentType := range []string{"application/json", "text/event-stream"} {
		t.Run(contentType, func(t *testing.T) {
			srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
				w.Header().Set("Content-Type", contentType)
				w.WriteHeader(200)
				rc := http.NewResponseController(w)
				// Leading blanks: JSON allows them before the value, and
				// in an event stream they are a line that never ends.
				drip := time.NewTicker(50 * time.Millisecond)
				defer drip.Stop()
				for {
					select {
					case <-r.Context().Done():
						return
					case <-drip.C:
					}
					_, _ = w.Write([]byte{' '})
					_ = rc.Flush()
				}
			})
			c := testConn(t, Target{URL: srv.URL}, Options{})
			const deadline = 400 * time.Millisecond
			start := time.Now()
			_, err := c.call(testCtx(t, deadline), "tools/list", nil)
			elapsed := time.Since(start)
			if got := outcomeOf(err).reason; got != ReasonTimeout {
				t.Fatalf("reason = %q (%v), want timeout", got, err)
			}
			if elapsed > returnedBy(deadline) {
				t.Errorf("returned %v after a %v deadline", elapsed, deadline)
			}
		})
	}
}

// headerLog records what each request carried.
type headerLog struct {
	mu   sync.Mutex
	seen []sentHeaders
}

type sentHeaders struct {
	HTTPMethod, RPCMethod, Version, McpMethod, McpName, Session, Accept, ContentType string
}

func (l *headerLog) add(r *http.Request, m *message) {
	s := sentHeaders{
		HTTPMethod: r.Method, Version: r.Header.Get("MCP-Protocol-Version"), McpMethod: r.Header.Get("Mcp-Method"),
		McpName: r.Header.Get("Mcp-Name"), Session: r.Header.Get("Mcp-Session-Id"),
		Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type"),
	}
	if m != nil {
		s.RPCMethod = m.Method
	}
	l.mu.Lock()
	l.seen = append(l.seen, s)
	l.mu.Unlock()
}

func (l *headerLog) all() []sentHeaders {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sentHeaders(nil), l.seen...)
}

const (
	accept = "application/json, text/event-stream"
	ctJSON = "application/json"
)

func modernParams(version string, extra map[string]any) map[string]any {
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// TestHTTPLegacyHeaders follows a legacy session: the modern discover
// attempt, initialize, the session id and negotiated version on every later
// request, and DELETE at the end.
func TestHTTPLegacyHeaders(t *testing.T) {
	var seen headerLog
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		seen.add(r, m)
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case m.Method == "server/discover":
			writeJSON(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-42")
			writeJSON(w, 200, resultFor(m, `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x"}}`))
		case m.Method == "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		default:
			writeJSON(w, 200, resultFor(m, `{"tools":[]}`))
		}
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	ctx := testCtx(t, 5*time.Second)

	_, err := c.call(ctx, "server/discover", modernParams(VersionModern, nil))
	if got := outcomeOf(err); got != (outcome{reason: ReasonRPCError, status: 400, code: -32000}) {
		t.Fatalf("server/discover: %+v (%v)", got, err)
	}
	if _, err := c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25"}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.setProtocol(EraLegacy, "2025-06-18")
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	if _, err := c.call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	c.close(ctx)

	want := []sentHeaders{
		{"POST", "server/discover", VersionModern, "server/discover", "", "", accept, ctJSON},
		{"POST", "initialize", "", "", "", "", accept, ctJSON},
		{"POST", "notifications/initialized", "2025-06-18", "", "", "sess-42", accept, ctJSON},
		{"POST", "tools/list", "2025-06-18", "", "", "sess-42", accept, ctJSON},
		{"DELETE", "", "2025-06-18", "", "", "sess-42", "", ""},
	}
	compareHeaders(t, seen.all(), want)
}

// TestHTTPModernHeaders: modern requests carry the version and the method
// (and Mcp-Name where one is due), and never a session id, even when the
// server hands one out; close sends no DELETE.
func TestHTTPModernHeaders(t *testing.T) {
	var seen headerLog
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		seen.add(r, m)
		w.Header().Set("Mcp-Session-Id", "should-be-ignored")
		if m == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, 200, resultFor(m, `{"resultType":"complete"}`))
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	ctx := testCtx(t, 5*time.Second)
	if _, err := c.call(ctx, "server/discover", modernParams(VersionModern, nil)); err != nil {
		t.Fatal(err)
	}
	c.setProtocol(EraModern, VersionModern)
	calls := []struct {
		method string
		params any
	}{
		{"tools/list", modernParams(VersionModern, map[string]any{"cursor": ""})},
		{"tools/call", modernParams(VersionModern, map[string]any{"name": "get_weather"})},
		{"tools/call", modernParams(VersionModern, map[string]any{"name": "météo"})},
		{"resources/read", modernParams(VersionModern, map[string]any{"uri": "=?base64?x"})},
		{"tools/list", nil}, // no _meta: the era set by setProtocol decides
	}
	for _, call := range calls {
		if _, err := c.call(ctx, call.method, call.params); err != nil {
			t.Fatalf("%s: %v", call.method, err)
		}
	}
	c.close(ctx)

	want := []sentHeaders{
		{"POST", "server/discover", VersionModern, "server/discover", "", "", accept, ctJSON},
		{"POST", "tools/list", VersionModern, "tools/list", "", "", accept, ctJSON},
		{"POST", "tools/call", VersionModern, "tools/call", "get_weather", "", accept, ctJSON},
		{"POST", "tools/call", VersionModern, "tools/call", "=?base64?bcOpdMOpbw==?=", "", accept, ctJSON},
		{"POST", "resources/read", VersionModern, "resources/read", "=?base64?PT9iYXNlNjQ/eA==?=", "", accept, ctJSON},
		{"POST", "tools/list", VersionModern, "tools/list", "", "", accept, ctJSON},
	}
	compareHeaders(t, seen.all(), want)
}

func compareHeaders(t *testing.T, got, want []sentHeaders) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d:\n got  %+v\n want %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d:\n got  %+v\n want %+v", i, got[i], want[i])
		}
	}
}

// TestHTTPEventStreamResponse: a response stream with a comment, a priming
// event, a notification, a server ping (answered with its own POST) and a
// response split over data lines, with CRLF line endings.
func TestHTTPEventStreamResponse(t *testing.T) {
	pingReply := make(chan string, 1)
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		if m == nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if m.Method == "" { // our reply to the ping
			raw, _ := json.Marshal(m)
			pingReply <- string(raw)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		_, _ = io.WriteString(w, ": keep-alive\r\n\r\nid: 0\r\ndata:\r\n\r\n"+
			"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\r\n\r\n")
		_ = rc.Flush()
		select { // the response waits for the ping's answer
		case <-time.After(5 * time.Second):
			return
		case <-r.Context().Done():
			return
		case reply := <-pingReply:
			pingReply <- reply
		}
		_, _ = fmt.Fprintf(w, "id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":%s,\"result\":{\"tools\":[]}}\r\n\r\n", m.ID)
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	result, err := c.call(testCtx(t, 10*time.Second), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Tools []any }
	if err := json.Unmarshal(result, &r); err != nil || r.Tools == nil {
		t.Fatalf("result %s: %v", result, err)
	}
	if got, want := <-pingReply, `{"jsonrpc":"2.0","id":"srv-1","result":{}}`; got != want {
		t.Errorf("ping reply %s, want %s", got, want)
	}
	if c.obs.listChanged != 1 {
		t.Errorf("list_changed notifications = %d, want 1", c.obs.listChanged)
	}
}

func TestHTTPEventStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		reason Reason
	}{
		{"ends before the response", "id: 0\ndata:\n\n", ReasonClosed},
		{"a response to another request", `data: {"jsonrpc":"2.0","id":7,"result":{}}` + "\n\n", ReasonProtocol},
		{"an event that is not JSON-RPC", "data: hello\n\n", ReasonProtocol},
		{"a response cut off by the end", `data: {"jsonrpc":"2.0","id":1,"result":{}}`, ReasonClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.stream)
			})
			c := testConn(t, Target{URL: srv.URL}, Options{})
			_, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil)
			if got := outcomeOf(err).reason; got != tt.reason {
				t.Fatalf("reason = %q (%v), want %q", got, err, tt.reason)
			}
		})
	}
}

// TestHTTPTranscriptHasNoHeaderValues: the transcript records messages and
// statuses, never what the headers carried.
func TestHTTPTranscriptHasNoHeaderValues(t *testing.T) {
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		w.Header().Set("Mcp-Session-Id", "session-value-xyz")
		if m == nil { // the DELETE that ends the session
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, 200, resultFor(m, `{"protocolVersion":"2025-11-25"}`))
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	if _, err := c.call(testCtx(t, 5*time.Second), "initialize", nil); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c.obs.entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{secretValue, "session-value-xyz"} {
		if strings.Contains(string(raw), v) {
			t.Errorf("transcript holds a header value %q: %s", v, raw)
		}
	}
	if !strings.Contains(string(raw), "HTTP 200") || !strings.Contains(string(raw), `"method":"initialize"`) {
		t.Errorf("transcript lacks the status or the message: %s", raw)
	}
}

func TestSSEFallback(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"405 empty", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 405}, true},
		{"404 page", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 404}, true},
		{"400 empty", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 400}, true},
		{"400 legacy session error", &RPCError{Code: -32000, HTTPStatus: 400}, true},
		{"400 invalid params", &RPCError{Code: -32602, HTTPStatus: 400}, true},
		{"404 -32601 is modern", &RPCError{Code: -32601, HTTPStatus: 404}, false},
		{"400 -32601 is not", &RPCError{Code: -32601, HTTPStatus: 400}, true},
		{"400 unsupported version", &RPCError{Code: -32022, HTTPStatus: 400}, false},
		{"400 missing capability", &RPCError{Code: -32021, HTTPStatus: 400}, false},
		{"400 header mismatch", &RPCError{Code: -32020, HTTPStatus: 400}, false},
		{"500", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 500}, false},
		{"406", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 406}, false},
		{"401", &Failure{Reason: ReasonUnauthorized, HTTPStatus: 401}, false},
		{"403", &Failure{Reason: ReasonForbidden, HTTPStatus: 403}, false},
		{"200 with an RPC error", &RPCError{Code: -32000, HTTPStatus: 200}, false},
		{"timeout", &Failure{Reason: ReasonTimeout}, false},
		{"wrapped 405", fmt.Errorf("initialize: %w", &Failure{Reason: ReasonHTTPStatus, HTTPStatus: 405}), true},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sseFallback(tt.err); got != tt.want {
				t.Fatalf("sseFallback(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestHTTPConfiguredHeaders: configured headers are sent, Host included,
// but never in place of the protocol's own.
func TestHTTPConfiguredHeaders(t *testing.T) {
	type seen struct{ accept, contentType, custom, host string }
	got := make(chan seen, 1)
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		got <- seen{r.Header.Get("Accept"), r.Header.Get("Content-Type"), r.Header.Get("X-Custom"), r.Host}
		writeJSON(w, 200, resultFor(m, `{}`))
	})
	headers := map[string]string{"accept": "text/html", "Content-Type": "text/plain", "x-custom": "v", "Host": "mcp.example.test"}
	c := testConn(t, Target{URL: srv.URL, Headers: headers}, Options{})
	if _, err := c.call(testCtx(t, 5*time.Second), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	if s, want := <-got, (seen{accept, ctJSON, "v", "mcp.example.test"}); s != want {
		t.Errorf("server saw %+v, want %+v", s, want)
	}
}

// TestHTTPSessionExpired: a 404 to a request carrying the session id says
// the session is gone.
func TestHTTPSessionExpired(t *testing.T) {
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		switch {
		case m != nil && m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			writeJSON(w, 200, resultFor(m, `{"protocolVersion":"2025-11-25"}`))
		default:
			http.NotFound(w, r)
		}
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	ctx := testCtx(t, 5*time.Second)
	if _, err := c.call(ctx, "initialize", nil); err != nil {
		t.Fatal(err)
	}
	c.setProtocol(EraLegacy, "2025-11-25")
	_, err := c.call(ctx, "tools/list", nil)
	if got := outcomeOf(err); got != (outcome{reason: ReasonHTTPStatus, status: 404}) || !strings.Contains(err.Error(), "no longer knows the session") {
		t.Fatalf("outcome %+v: %v", got, err)
	}
}

// TestHTTPCloseLeavesNoConnection: once a conn is closed, the server sees
// every connection of it closed, idle ones included: nothing of a probe
// outlives it.
func TestHTTPCloseLeavesNoConnection(t *testing.T) {
	var (
		mu   sync.Mutex
		open = map[net.Conn]bool{}
	)
	srv := httptest.NewUnstartedServer(rpcHandler(func(w http.ResponseWriter, r *http.Request, m *message) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "text/event-stream")
			// The stream stays open after the response, as some SDKs do.
			_, _ = fmt.Fprintf(w, "data: %s\n\n", resultFor(m, `{"protocolVersion":"2025-11-25"}`))
			_ = http.NewResponseController(w).Flush()
			<-r.Context().Done()
		default:
			writeJSON(w, 200, resultFor(m, `{"tools":[]}`))
		}
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		if s == http.StateClosed || s == http.StateHijacked {
			delete(open, c)
		} else {
			open[c] = true
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := testConn(t, Target{URL: srv.URL}, Options{})
	ctx := testCtx(t, 5*time.Second)
	if _, err := c.call(ctx, "initialize", nil); err != nil {
		t.Fatal(err)
	}
	c.setProtocol(EraLegacy, "2025-11-25")
	if _, err := c.call(ctx, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	c.close(ctx)
	deadline := time.Now().Add(20 * time.Second) // generous: only a leak reaches it
	for {
		mu.Lock()
		n := len(open)
		mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after close", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPModernServerRequestNotAnswered: in the modern era a server sends
// no requests and a client no responses; a ping on a response stream is
// reported, not answered.
func TestHTTPModernServerRequestNotAnswered(t *testing.T) {
	var (
		mu      sync.Mutex
		replies int
	)
	srv := rpcServer(t, func(w http.ResponseWriter, r *http.Request, m *message) {
		if m == nil || m.Method == "" {
			mu.Lock()
			replies++
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, event(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)+
			event(resultFor(m, `{"tools":[],"resultType":"complete"}`)))
	})
	c := testConn(t, Target{URL: srv.URL}, Options{})
	c.setProtocol(EraModern, VersionModern)
	if _, err := c.call(testCtx(t, 5*time.Second), "tools/list", modernParams(VersionModern, nil)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if replies != 0 {
		t.Errorf("%d replies POSTed to the server's ping", replies)
	}
	c.obs.mu.Lock()
	defer c.obs.mu.Unlock()
	if len(c.obs.warnings) != 1 || !strings.Contains(c.obs.warnings[0], "ping") {
		t.Errorf("warnings %q, want one about the ping", c.obs.warnings)
	}
}

// Retry-After is seconds or an HTTP date (RFC 9110), read as a wait from
// now; anything else is none.
func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120":                           2 * time.Minute,
		"Tue, 01 Dec 2026 12:05:00 GMT": 5 * time.Minute,
		"Tue, 01 Dec 2026 11:00:00 GMT": 0,
	} {
		if got, ok := retryAfter(http.Header{"Retry-After": {v}}, now); !ok || got != want {
			t.Errorf("Retry-After %q: %s, %v; want %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "-5"} {
		if _, ok := retryAfter(http.Header{"Retry-After": {v}}, now); ok {
			t.Errorf("Retry-After %q read as a wait", v)
		}
	}
}

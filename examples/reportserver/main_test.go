package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// childEnv makes the test binary run the report server over stdio with the
// arguments after "--".
const childEnv = "REPORTSERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		args := os.Args[slices.Index(os.Args, "--")+1:]
		os.Exit(run(context.Background(), args, os.Getenv, stdio{os.Stdin, os.Stdout}, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// methods records the methods a client sends.
type methods struct {
	mu   sync.Mutex
	sent []string
}

func (m *methods) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		m.mu.Lock()
		m.sent = append(m.sent, method)
		m.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (m *methods) has(method string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.sent, method)
}

// connect opens a go-sdk client session over t, recording what it sends.
func connect(t *testing.T, transport mcp.Transport) (*mcp.ClientSession, *methods, error) {
	t.Helper()
	rec := &methods{}
	client := mcp.NewClient(&mcp.Implementation{Name: "reportserver-test", Version: "0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	client.AddSendingMiddleware(rec.middleware)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, rec, err
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

var (
	allTools  = []string{"fetch_daily_report", "list_report_dates"}
	readTools = []string{"list_report_dates"}
)

func stdioTransport(era string, env map[string]string) *mcp.CommandTransport {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "--era", era)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), childEnv + "=1", "GORACE=atexit_sleep_ms=0"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return &mcp.CommandTransport{Command: cmd}
}

func TestStdioToolsDependOnTheToken(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"token", map[string]string{"REPORT_API_TOKEN": "t0ken"}, allTools},
		{"no token", nil, nil},
		{"empty token", map[string]string{"REPORT_API_TOKEN": ""}, nil},
		{"read scope", map[string]string{"REPORT_API_TOKEN": "t0ken", "REPORT_SCOPE": "read"}, readTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, _, err := connect(t, stdioTransport("dual", tt.env))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := toolNames(t, cs); !slices.Equal(got, tt.want) {
				t.Errorf("tools %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStdioEras(t *testing.T) {
	tests := []struct {
		era            string
		wantVersion    string
		wantInitialize bool
	}{
		{"modern", "2026-07-28", false},
		{"dual", "2026-07-28", false},
		// go-sdk answers server/discover with -32022 listing only legacy
		// versions, and its client falls back to initialize.
		{"legacy", "2025-11-25", true},
	}
	for _, tt := range tests {
		t.Run(tt.era, func(t *testing.T) {
			cs, sent, err := connect(t, stdioTransport(tt.era, map[string]string{"REPORT_API_TOKEN": "t0ken"}))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != tt.wantVersion || sent.has("initialize") != tt.wantInitialize {
				t.Errorf("version %q, initialize sent %v; want %q, %v", got, sent.has("initialize"), tt.wantVersion, tt.wantInitialize)
			}
			if got := toolNames(t, cs); !slices.Equal(got, allTools) {
				t.Errorf("tools %v", got)
			}
		})
	}
}

func TestToolsAnswer(t *testing.T) {
	cs, _, err := connect(t, stdioTransport("dual", map[string]string{"REPORT_API_TOKEN": "t0ken"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch_daily_report", Arguments: map[string]any{"date": "2026-08-01"}})
	if err != nil || res.IsError {
		t.Fatalf("fetch_daily_report: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"date":"2026-08-01"`) || !strings.Contains(text, `"orders"`) {
		t.Errorf("report %s", text)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch_daily_report", Arguments: map[string]any{"date": "yesterday"}})
	if err != nil || !res.IsError {
		t.Errorf("a bad date: %v %+v, want a tool error", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_report_dates", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "2026-08-0") {
		t.Errorf("list_report_dates: %v %+v", err, res)
	}
}

// bearerTransport adds an Authorization header to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

func startHTTP(t *testing.T, e era, auth httpAuth) *httptest.Server {
	t.Helper()
	return startHTTPWith(t, e, auth, nil)
}

func startHTTPWith(t *testing.T, e era, auth httpAuth, up upstream) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(newHTTPHandler(e, auth, up))
	t.Cleanup(ts.Close)
	return ts
}

func httpTransport(ts *httptest.Server, token string) *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{
		Endpoint:             ts.URL,
		HTTPClient:           &http.Client{Transport: bearerTransport{token: token, next: ts.Client().Transport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
}

func TestHTTPToolsDependOnTheBearerToken(t *testing.T) {
	tests := []struct {
		name   string
		server httpAuth
		token  string
		want   []string
	}{
		{"right token", httpAuth{token: "t0ken"}, "t0ken", allTools},
		{"no header", httpAuth{token: "t0ken"}, "", nil},
		{"read scope", httpAuth{token: "t0ken", scope: "read"}, "t0ken", readTools},
		{"server without a token", httpAuth{}, "anything", nil},
	}
	for _, tt := range tests {
		for _, e := range []era{eraModern, eraLegacy, eraDual} {
			t.Run(tt.name+"/"+string(e), func(t *testing.T) {
				ts := startHTTP(t, e, tt.server)
				cs, _, err := connect(t, httpTransport(ts, tt.token))
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				if got := toolNames(t, cs); !slices.Equal(got, tt.want) {
					t.Errorf("tools %v, want %v", got, tt.want)
				}
			})
		}
	}
}

func TestHTTPWrongTokenGets401(t *testing.T) {
	ts := startHTTP(t, eraDual, httpAuth{token: "t0ken"})
	if _, _, err := connect(t, httpTransport(ts, "wrong")); err == nil {
		t.Error("connect with a wrong token succeeded")
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Authorization", "Bearer wrong")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("%d %q, want 401 with a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestHTTPEras(t *testing.T) {
	tests := []struct {
		era            era
		wantVersion    string
		wantInitialize bool
	}{
		{eraModern, "2026-07-28", false},
		{eraDual, "2026-07-28", false},
		{eraLegacy, "2025-11-25", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.era), func(t *testing.T) {
			ts := startHTTP(t, tt.era, httpAuth{token: "t0ken"})
			cs, sent, err := connect(t, httpTransport(ts, "t0ken"))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != tt.wantVersion || sent.has("initialize") != tt.wantInitialize {
				t.Errorf("version %q, initialize sent %v; want %q, %v", got, sent.has("initialize"), tt.wantVersion, tt.wantInitialize)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--era", "ancient"}, 2},
		{[]string{"extra"}, 2},
		{[]string{"--help"}, 0},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		if got := run(context.Background(), tt.args, func(string) string { return "" }, stdio{}, &stderr); got != tt.want {
			t.Errorf("run %v = %d, want %d (%s)", tt.args, got, tt.want, stderr.String())
		}
	}
}

// With its API key revoked (the file emptied), the server still lists
// both tools, annotated read-only, and every call fails with isError; the
// key written back, calls work again, without a restart.
func TestRevokedAPIKey(t *testing.T) {
	key := t.TempDir() + "/api-key"
	if err := os.WriteFile(key, []byte("example-api-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range []era{eraModern, eraLegacy} {
		t.Run(string(e), func(t *testing.T) {
			ts := startHTTPWith(t, e, httpAuth{token: "t0ken"}, keyFile(key))
			cs, _, err := connect(t, httpTransport(ts, "t0ken"))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			call := func() *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_daily_report", Arguments: map[string]any{"date": "2026-08-01"}})
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				return res
			}
			if res := call(); res.IsError {
				t.Fatalf("with the key: isError %v", res.Content)
			}
			if err := os.WriteFile(key, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = os.WriteFile(key, []byte("example-api-key\n"), 0o600) }()
			if got := toolNames(t, cs); !slices.Equal(got, allTools) {
				t.Errorf("revoked: tools %v, want both still listed", got)
			}
			res := call()
			text := ""
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			if !res.IsError || !strings.Contains(text, "401 Unauthorized") {
				t.Errorf("revoked: isError %v, text %q", res.IsError, text)
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
					t.Errorf("%s is not annotated read-only", tool.Name)
				}
			}
		})
	}
}

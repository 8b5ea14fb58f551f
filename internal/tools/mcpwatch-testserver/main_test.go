package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{[]string{"--help"}, 0, "--behavior", ""},
		{[]string{"--behavior", "weird"}, 2, "", `unknown behavior "weird"`},
		{[]string{"--era", "ancient"}, 2, "", `unknown era "ancient"`},
		{[]string{"stray"}, 2, "", `unexpected argument "stray"`},
		{[]string{"--behavior", "exit-at-once"}, 1, "", "fatal: REPORT_API_TOKEN is not set\n"},
		{[]string{"--behavior", "server-error-500"}, 1, "", "over HTTP only"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			got := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if got != tt.want || !strings.Contains(stdout.String(), tt.wantStdout) || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", got, stdout.String(), stderr.String(), tt.want, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestStdio(t *testing.T) {
	t.Setenv("REPORT_API_TOKEN", "")
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	var stdout, stderr strings.Builder
	if got := run([]string{"--behavior", "token-gated", "--token", "t"}, in, &stdout, &stderr); got != 0 {
		t.Fatalf("exit %d: %s", got, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) || !strings.Contains(lines[1], `"tools":[]`) {
		t.Errorf("stdout %q, want the handshake and zero tools (no token in this environment)", stdout.String())
	}
}

// syncWriter lets the test read what the server logs while it runs.
type syncWriter struct {
	mu sync.Mutex
	sb strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sb.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sb.String()
}

func TestHTTPServesBothTransports(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncWriter{}
	served := make(chan error, 1)
	go func() {
		served <- serveHTTP(ctx, probetest.Config{Era: probetest.EraDual}, "127.0.0.1:0", stderr)
	}()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serveHTTP: %v", err)
		}
	}()
	base := waitForBase(t, stderr)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	req, _ := http.NewRequest(http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" || !strings.Contains(string(body), "2025-11-25") {
		t.Errorf("POST /mcp initialize: %d %s", resp.StatusCode, body)
	}

	sseCtx, sseCancel := context.WithCancel(context.Background())
	defer sseCancel()
	req, _ = http.NewRequestWithContext(sseCtx, http.MethodGet, base+"/sse", nil)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	second, _ := br.ReadString('\n')
	if first != "event: endpoint\n" || !strings.HasPrefix(second, "data: sse?sessionId=") {
		t.Errorf("GET /sse began %q %q, want the endpoint event", first, second)
	}
}

var baseRE = regexp.MustCompile(`streamable HTTP at (http://\S+)/mcp`)

func waitForBase(t *testing.T, stderr *syncWriter) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := baseRE.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no address logged: %q", stderr.String())
	return ""
}

package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		max    int64
		want   []sseEvent
		err    Reason // the failure after the events; "" means a clean io.EOF
	}{
		{
			name:   "fields, comments and blank lines",
			stream: ": hello\n\n\nevent: endpoint\ndata: /messages?s=1\n\nid: 7\ndata: {}\n\n",
			want:   []sseEvent{{Event: "endpoint", Data: "/messages?s=1"}, {ID: "7", Data: "{}"}},
		},
		{
			name:   "data lines joined, one leading space stripped",
			stream: "data:a\ndata:  b\ndata\n\n",
			want:   []sseEvent{{Data: "a\n b\n"}},
		},
		{
			name:   "CRLF and CR line endings",
			stream: "data: a\r\n\r\ndata: b\r\rdata: c\r\n\n",
			want:   []sseEvent{{Data: "a"}, {Data: "b"}, {Data: "c"}},
		},
		{
			name:   "priming event: an id and empty data",
			stream: "id: 0\ndata:\n\ndata: x\n\n",
			want:   []sseEvent{{ID: "0"}, {Data: "x"}},
		},
		{
			name:   "unknown fields and retry ignored",
			stream: "retry: 10\nfoo: bar\n\ndata: x\nfoo: bar\n\n",
			want:   []sseEvent{{Data: "x"}},
		},
		{
			name:   "an event cut off by the end is dropped",
			stream: "data: x\n\ndata: cut",
			want:   []sseEvent{{Data: "x"}},
		},
		{
			name:   "a line over the cap",
			stream: "data: x\n\ndata: " + strings.Repeat("z", 300) + "\n\n",
			max:    100,
			want:   []sseEvent{{Data: "x"}},
			err:    ReasonTooLarge,
		},
		{
			name:   "an event of many lines over the cap",
			stream: strings.Repeat("data: "+strings.Repeat("z", 30)+"\n", 5) + "\n",
			max:    100,
			err:    ReasonTooLarge,
		},
		{
			name:   "an event exactly at the cap",
			stream: "data: " + strings.Repeat("z", 49) + "\ndata: " + strings.Repeat("z", 50) + "\n\n",
			max:    100,
			want:   []sseEvent{{Data: strings.Repeat("z", 49) + "\n" + strings.Repeat("z", 50)}},
		},
		{
			name:   "a comment over the cap fails too: it is a line",
			stream: ":" + strings.Repeat("c", 300) + "\n\n",
			max:    100,
			err:    ReasonTooLarge,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1 << 20
			}
			// A one-byte reader makes every line straddle reads.
			r := newSSEReader(&oneByteReader{s: tt.stream}, max)
			var got []sseEvent
			var err error
			for {
				var ev sseEvent
				if ev, err = r.next(); err != nil {
					break
				}
				got = append(got, ev)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
			switch {
			case tt.err == "" && !errors.Is(err, io.EOF):
				t.Errorf("end = %v, want io.EOF", err)
			case tt.err != "" && outcomeOf(err).reason != tt.err:
				t.Errorf("end = %v, want %s", err, tt.err)
			}
		})
	}
}

type oneByteReader struct{ s string }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[0]
	r.s = r.s[1:]
	return 1, nil
}

// legacyServer is a small HTTP+SSE server whose stream tests can steer:
// POSTs to /messages are answered 202 and the events reply returns are
// pushed onto the stream.
type legacyServer struct {
	*httptest.Server
	events  chan string   // raw SSE text for the stream
	end     chan struct{} // closing it ends the stream
	replies chan *message // our answers to server requests

	endOnce sync.Once

	mu    sync.Mutex
	posts []*http.Request
}

func (ls *legacyServer) endStream() { ls.endOnce.Do(func() { close(ls.end) }) }

type legacyConfig struct {
	getStatus   int    // default 200
	contentType string // default text/event-stream
	endpoint    string // endpoint event data; "-" sends none
	postStatus  int    // default 202
	reply       func(m *message) []string
}

func startLegacyServer(t *testing.T, cfg legacyConfig) *legacyServer {
	t.Helper()
	ls := &legacyServer{events: make(chan string, 100), end: make(chan struct{}), replies: make(chan *message, 10)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", cmp(cfg.contentType, "text/event-stream"))
		w.WriteHeader(cmp(cfg.getStatus, 200))
		if cfg.endpoint != "-" {
			fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", cmp(cfg.endpoint, "/messages?sessionId=abc"))
		}
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		for {
			select {
			case ev := <-ls.events:
				_, _ = io.WriteString(w, ev)
				_ = rc.Flush()
			case <-ls.end:
				return
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		ls.mu.Lock()
		ls.posts = append(ls.posts, r.Clone(context.Background()))
		ls.mu.Unlock()
		var m message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(cmp(cfg.postStatus, http.StatusAccepted))
		if m.Method == "" {
			ls.replies <- &m
			return
		}
		if cfg.reply != nil {
			for _, ev := range cfg.reply(&m) {
				ls.events <- ev
			}
		}
	})
	ls.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		ls.endStream()
		ls.Close()
	})
	return ls
}

func cmp[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

func event(s string) string { return "data: " + s + "\n\n" }

func openTestSSE(t *testing.T, ctx context.Context, url string) (*sseConn, error) {
	t.Helper()
	c, err := newSSEConn(ctx, Target{URL: url, Headers: map[string]string{"Authorization": "Bearer " + secretValue}},
		Options{MaxMessageBytes: 64 << 10}.WithDefaults(), &observer{start: time.Now()})
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c.close(ctx)
		})
	}
	return c, err
}

func TestSSEConn(t *testing.T) {
	ls := startLegacyServer(t, legacyConfig{reply: func(m *message) []string {
		switch m.Method {
		case "initialize":
			return []string{event(resultFor(m, `{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"old"}}`))}
		case "tools/list":
			return []string{
				": keep-alive\n\n",
				event(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`),
				event(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),
				event(`{"jsonrpc":"2.0","id":999,"result":{}}`), // nobody waits for it: a warning
				"event: message\n" + event(resultFor(m, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)),
			}
		}
		return nil
	}})
	ctx := testCtx(t, 10*time.Second)
	c, err := openTestSSE(t, ctx, ls.URL+"/sse")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25"}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.setProtocol(EraLegacy, "2024-11-05")
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	result, err := c.call(ctx, "tools/list", nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if !strings.Contains(string(result), `"name":"a"`) {
		t.Errorf("tools/list result %s", result)
	}
	select {
	case reply := <-ls.replies:
		if raw, _ := json.Marshal(reply); string(raw) != `{"jsonrpc":"2.0","id":"srv-1","result":{}}` {
			t.Errorf("ping answered with %s", raw)
		}
	case <-ctx.Done():
		t.Fatal("the server's ping was never answered")
	}
	c.close(ctx)

	c.obs.mu.Lock()
	listChanged, warnings := c.obs.listChanged, c.obs.warnings
	c.obs.mu.Unlock()
	if listChanged != 1 {
		t.Errorf("list_changed notifications = %d, want 1", listChanged)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "id 999") {
		t.Errorf("warnings = %q, want one about id 999", warnings)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, r := range ls.posts {
		if r.URL.RawQuery != "sessionId=abc" || r.Header.Get("Authorization") != "Bearer "+secretValue {
			t.Errorf("POST %s without the endpoint's query or the configured header", r.URL)
		}
	}
}

func TestSSEConnOpenFailures(t *testing.T) {
	tests := []struct {
		name    string
		cfg     legacyConfig
		path    string
		timeout time.Duration
		want    outcome
		wantErr string
	}{
		{"no endpoint event before the deadline", legacyConfig{endpoint: "-"}, "/sse", 300 * time.Millisecond,
			outcome{reason: ReasonTimeout}, "no endpoint event"},
		{"endpoint on another origin", legacyConfig{endpoint: "http://127.0.0.2:9/messages"}, "/sse", 0,
			outcome{reason: ReasonProtocol}, "another origin"},
		{"endpoint with another scheme", legacyConfig{endpoint: "https:/messages"}, "/sse", 0,
			outcome{reason: ReasonProtocol}, "another origin"},
		{"not an event stream", legacyConfig{contentType: "application/json"}, "/sse", 0,
			outcome{reason: ReasonProtocol}, "not an event stream"},
		{"GET refused", legacyConfig{getStatus: 401}, "/sse", 0,
			outcome{reason: ReasonUnauthorized, status: 401}, "401"},
		{"no stream there", legacyConfig{}, "/mcp", 0,
			outcome{reason: ReasonHTTPStatus, status: 404}, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := startLegacyServer(t, tt.cfg)
			timeout := cmp(tt.timeout, 5*time.Second)
			start := time.Now()
			_, err := openTestSSE(t, testCtx(t, timeout), ls.URL+tt.path)
			if got := outcomeOf(err); got != tt.want {
				t.Fatalf("outcome = %+v (%v), want %+v", got, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			checkMessage(t, err)
			if elapsed := time.Since(start); elapsed > returnedBy(timeout) {
				t.Errorf("returned after %v, the deadline was %v", elapsed, timeout)
			}
		})
	}
}

// The stream ends while a call waits for its reply: the call fails with
// reason closed. The stream ends once the server has the call's POST, so
// the call is past sending and waits (a stream ended before the call would
// test the later-call path below instead).
func TestSSEConnStreamEnds(t *testing.T) {
	posted := make(chan struct{})
	var once sync.Once
	ls := startLegacyServer(t, legacyConfig{reply: func(*message) []string { // never replies
		once.Do(func() { close(posted) })
		return nil
	}})
	ctx := testCtx(t, 10*time.Second)
	c, err := openTestSSE(t, ctx, ls.URL+"/sse")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		select {
		case <-posted:
		case <-ctx.Done():
		}
		ls.endStream()
	}()
	_, err = c.call(ctx, "tools/list", nil)
	if got := outcomeOf(err).reason; got != ReasonClosed {
		t.Fatalf("reason = %q (%v), want closed", got, err)
	}
	// Later calls fail at once the same way.
	if _, err := c.call(ctx, "tools/list", nil); outcomeOf(err).reason != ReasonClosed {
		t.Fatalf("a call after the end: %v", err)
	}
}

func TestSSEConnCallFailures(t *testing.T) {
	tests := []struct {
		name    string
		cfg     legacyConfig
		timeout time.Duration
		want    outcome
	}{
		{"no reply before the deadline", legacyConfig{}, 300 * time.Millisecond, outcome{reason: ReasonTimeout}},
		{"an event over the cap", legacyConfig{reply: func(m *message) []string {
			return []string{event(strings.Repeat("x", 100<<10))}
		}}, 0, outcome{reason: ReasonTooLarge}},
		{"an event that is not JSON-RPC", legacyConfig{reply: func(m *message) []string {
			return []string{event("not json")}
		}}, 0, outcome{reason: ReasonProtocol}},
		{"POST refused", legacyConfig{postStatus: 500}, 0, outcome{reason: ReasonHTTPStatus, status: 500}},
		{"an RPC error on the stream", legacyConfig{reply: func(m *message) []string {
			return []string{event(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, m.ID))}
		}}, 0, outcome{reason: ReasonRPCError, code: -32601}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := startLegacyServer(t, tt.cfg)
			timeout := cmp(tt.timeout, 5*time.Second)
			c, err := openTestSSE(t, testCtx(t, 5*time.Second), ls.URL+"/sse")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.call(testCtx(t, timeout), "tools/list", nil)
			if got := outcomeOf(err); got != tt.want {
				t.Fatalf("outcome = %+v (%v), want %+v", got, err, tt.want)
			}
			checkMessage(t, err)
			if elapsed := time.Since(start); elapsed > returnedBy(timeout) {
				t.Errorf("returned after %v, the deadline was %v", elapsed, timeout)
			}
		})
	}
}

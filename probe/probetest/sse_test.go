package probetest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// sseClient is a legacy HTTP+SSE (2024-11-05) client over raw HTTP.
type sseClient struct {
	t        *testing.T
	srv      *probetest.Server
	client   *http.Client
	rawURL   string // the endpoint event's data, unresolved
	endpoint string
	events   chan sseEvent
	nextID   int
}

// startSSE serves the SSE transport at mountPath and opens its stream.
func startSSE(t *testing.T, cfg probetest.Config, mountPath string, headers http.Header) *sseClient {
	t.Helper()
	srv := probetest.NewServer(cfg)
	mux := http.NewServeMux()
	mux.Handle(mountPath, srv.SSE())
	ts := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	c := &sseClient{t: t, srv: srv, client: ts.Client(), events: make(chan sseEvent, 16)}
	readDone := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-readDone
		srv.Close()
		ts.Close()
	})

	streamURL := ts.URL + mountPath
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, streamURL, nil)
	req.Header = headers.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		close(readDone)
		t.Fatal(err)
	}
	go func() {
		defer close(readDone)
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := nextEvent(br)
			if err != nil {
				close(c.events)
				return
			}
			c.events <- ev
		}
	}()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", streamURL, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	first := c.next()
	if first.name != "endpoint" {
		t.Fatalf("first event %+v, want endpoint", first)
	}
	base, _ := url.Parse(streamURL)
	ref, err := url.Parse(first.data)
	if err != nil {
		t.Fatalf("endpoint %q: %v", first.data, err)
	}
	c.rawURL, c.endpoint = first.data, base.ResolveReference(ref).String()
	return c
}

func (c *sseClient) next() sseEvent {
	c.t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			c.t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(waitLimit):
		c.t.Fatalf("no event in %v", waitLimit)
	}
	return sseEvent{}
}

// recv returns the next message event's message.
func (c *sseClient) recv() rpcMsg {
	c.t.Helper()
	ev := c.next()
	if ev.name != "message" {
		c.t.Fatalf("event %+v, want a message", ev)
	}
	return decodeMsg(c.t, []byte(ev.data))
}

// post sends a message to the endpoint; it must get 202.
func (c *sseClient) post(msg any) {
	c.t.Helper()
	b, _ := json.Marshal(msg)
	resp, err := c.client.Post(c.endpoint, "application/json", bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("POST %s: %d, want 202", c.endpoint, resp.StatusCode)
	}
}

func (c *sseClient) call(method string, params any) rpcMsg {
	c.t.Helper()
	c.nextID++
	c.post(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	m := c.recv()
	if string(m.ID) != strconv.Itoa(c.nextID) {
		c.t.Fatalf("%s: reply %s, want id %d", method, m, c.nextID)
	}
	return m
}

func (c *sseClient) initialize() {
	c.t.Helper()
	if m := c.call("initialize", initializeParams("2024-11-05")); m.Error != nil {
		c.t.Fatalf("initialize: %s", m)
	}
	c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

func TestSSETransport(t *testing.T) {
	c := startSSE(t, probetest.Config{}, "/sse", nil)
	if !strings.HasPrefix(c.rawURL, "sse?sessionId=") {
		t.Errorf("endpoint %q, want a relative URI: the last segment and the session", c.rawURL)
	}
	init := c.call("initialize", initializeParams("2024-11-05"))
	var version string
	init.field(t, "protocolVersion", &version)
	if version != "2024-11-05" {
		t.Errorf("version %q", version)
	}
	c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if got := c.call("tools/list", nil).list(t).names(); !slices.Equal(got, reportTools) {
		t.Errorf("tools %v", got)
	}
	if c.srv.Received("initialize") != 1 || c.srv.Received("notifications/initialized") != 1 {
		t.Errorf("Received: initialize %d, initialized %d", c.srv.Received("initialize"), c.srv.Received("notifications/initialized"))
	}
	resp, err := c.client.Post(strings.Split(c.endpoint, "?")[0]+"?sessionId=unknown", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown session: %d, want 404", resp.StatusCode)
	}
}

func TestSSEEndpointAtTheRoot(t *testing.T) {
	c := startSSE(t, probetest.Config{}, "/", nil)
	if !strings.HasPrefix(c.rawURL, "?sessionId=") {
		t.Errorf("endpoint %q, want ?sessionId=...", c.rawURL)
	}
	c.initialize()
}

func TestSSEBehaviors(t *testing.T) {
	t.Run("ping first", func(t *testing.T) {
		c := startSSE(t, probetest.Config{Behavior: probetest.PingFirst}, "/sse", nil)
		c.initialize()
		c.nextID++
		listID := c.nextID
		c.post(map[string]any{"jsonrpc": "2.0", "id": listID, "method": "tools/list"})
		ping := c.recv()
		if ping.Method != "ping" {
			t.Fatalf("got %s, want a ping request", ping)
		}
		c.post(map[string]any{"jsonrpc": "2.0", "id": ping.ID, "result": map[string]any{}})
		if m := c.recv(); string(m.ID) != strconv.Itoa(listID) || len(m.list(t).Tools) != 2 {
			t.Errorf("got %s, want the tools/list reply", m)
		}
	})
	t.Run("list changed", func(t *testing.T) {
		c := startSSE(t, probetest.Config{Behavior: probetest.ListChanged}, "/sse", nil)
		c.initialize()
		if m := c.recv(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("after initialized: %s, want list_changed", m)
		}
	})
	t.Run("token gated", func(t *testing.T) {
		for _, token := range []string{"", "s3cret"} {
			headers := http.Header{}
			if token != "" {
				headers = withBearer(headers, token)
			}
			c := startSSE(t, probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, "/sse", headers)
			c.initialize()
			if got := c.call("tools/list", nil).list(t); (token == "") != (len(got.Tools) == 0) {
				t.Errorf("token %q: tools %v", token, got.names())
			}
		}
	})
	t.Run("401 on the stream", func(t *testing.T) {
		srv := probetest.NewServer(probetest.Config{Behavior: probetest.Unauthorized401})
		ts := httptest.NewServer(srv.SSE())
		defer ts.Close()
		resp, err := ts.Client().Get(ts.URL + "/sse")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})
}

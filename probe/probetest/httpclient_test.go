package probetest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// httpTarget is a test server behind httptest, and a client for it.
type httpTarget struct {
	t      *testing.T
	srv    *probetest.Server
	url    string
	client *http.Client
	nextID int
}

func startHTTP(t *testing.T, cfg probetest.Config) *httpTarget {
	t.Helper()
	srv := probetest.NewServer(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return &httpTarget{t: t, srv: srv, url: ts.URL + "/mcp", client: ts.Client()}
}

// request builds a JSON-RPC request with the next id.
func (h *httpTarget) request(method string, params any) map[string]any {
	h.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": h.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	return msg
}

// do POSTs a message with the streamable HTTP headers plus extra, and
// returns the response with its body read.
func (h *httpTarget) do(ctx context.Context, msg any, extra http.Header) (*http.Response, []byte, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(b))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// post is do that must succeed at the HTTP level.
func (h *httpTarget) post(msg any, extra http.Header) (*http.Response, []byte) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	resp, body, err := h.do(ctx, msg, extra)
	if err != nil {
		h.t.Fatalf("POST %v: %v", msg, err)
	}
	return resp, body
}

// modernHeaders are the headers a 2026-07-28 request carries.
func modernHeaders(method string) http.Header {
	return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
}

// modernCall POSTs a modern request and returns its status and message.
func (h *httpTarget) modernCall(method string, params map[string]any) (int, rpcMsg) {
	h.t.Helper()
	resp, body := h.post(h.request(method, modernParams("2026-07-28", params)), modernHeaders(method))
	return resp.StatusCode, decodeMsg(h.t, body)
}

// session does the legacy handshake over streamable HTTP and returns the
// session id.
func (h *httpTarget) session(version string) string {
	h.t.Helper()
	resp, body := h.post(h.request("initialize", initializeParams(version)), nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		h.t.Fatalf("initialize: %d, session %q: %s", resp.StatusCode, id, body)
	}
	resp, body = h.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, sessionHeader(id))
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}
	return id
}

func sessionHeader(id string) http.Header { return http.Header{"Mcp-Session-Id": {id}} }

func withBearer(h http.Header, token string) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out.Set("Authorization", "Bearer "+token)
	return out
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name, id, data string
	hasData        bool
}

// nextEvent reads one event; comments and blank lines between events are
// skipped.
func nextEvent(br *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	started := false
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			if started {
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(l, ":") {
			continue
		}
		started = true
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name = value
		case "id":
			ev.id = value
		case "data":
			ev.data, ev.hasData = ev.data+value, true
		}
	}
}

// events splits a whole SSE body.
func events(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(body))
	var out []sseEvent
	for {
		ev, err := nextEvent(br)
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

package probetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestHTTPLegacySession(t *testing.T) {
	h := startHTTP(t, probetest.Config{Era: probetest.EraLegacy})

	resp, body := h.post(h.request("tools/list", nil), nil)
	if m := decodeMsg(t, body); resp.StatusCode != 400 || m.errorCode() != -32000 || m.Error.Message != "Bad Request: No valid session ID provided" {
		t.Errorf("tools/list without a session: %d %s, want 400 and the TypeScript SDK's -32000", resp.StatusCode, body)
	}
	resp, body = h.post(h.request("server/discover", modernParams("2026-07-28", nil)), modernHeaders("server/discover"))
	if m := decodeMsg(t, body); resp.StatusCode != 400 || m.errorCode() != -32000 {
		t.Errorf("server/discover on a legacy server: %d %s, want 400 -32000", resp.StatusCode, body)
	}

	resp, body = h.post(h.request("initialize", initializeParams("2025-06-18")), nil)
	var version string
	decodeMsg(t, body).field(t, "protocolVersion", &version)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || version != "2025-06-18" || id == "" {
		t.Fatalf("initialize: %d %s %q, session %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, id)
	}
	if h.srv.Sessions() != 1 {
		t.Errorf("Sessions() = %d after initialize, want 1", h.srv.Sessions())
	}

	resp, body = h.post(h.request("tools/list", nil), sessionHeader(id))
	if got := decodeMsg(t, body).list(t).names(); resp.StatusCode != 200 || !slices.Equal(got, reportTools) {
		t.Errorf("tools/list in the session: %d %v", resp.StatusCode, got)
	}
	resp, body = h.post(h.request("tools/list", nil), sessionHeader("unknown"))
	if resp.StatusCode != 404 || decodeMsg(t, body).errorCode() != -32001 {
		t.Errorf("unknown session: %d %s, want 404 -32001", resp.StatusCode, body)
	}
	bad := sessionHeader(id)
	bad.Set("MCP-Protocol-Version", "1999-01-01")
	if resp, body = h.post(h.request("tools/list", nil), bad); resp.StatusCode != 400 {
		t.Errorf("invalid MCP-Protocol-Version: %d %s, want 400", resp.StatusCode, body)
	}

	// The standalone GET stream opens with a priming event.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	getResp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := nextEvent(bufio.NewReader(getResp.Body))
	if getResp.StatusCode != 200 || err != nil || ev.id == "" || ev.data != "" || !ev.hasData {
		t.Errorf("GET stream: %d, first event %+v (%v); want a priming event", getResp.StatusCode, ev, err)
	}
	cancel()
	getResp.Body.Close()

	del, _ := http.NewRequest(http.MethodDelete, h.url, nil)
	del.Header.Set("Mcp-Session-Id", id)
	delResp, err := h.client.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	delResp.Body.Close()
	if delResp.StatusCode != 200 || h.srv.Sessions() != 0 {
		t.Errorf("DELETE: %d, %d sessions left; want 200 and none", delResp.StatusCode, h.srv.Sessions())
	}
	if resp, _ = h.post(h.request("tools/list", nil), sessionHeader(id)); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %d, want 404", resp.StatusCode)
	}
	if h.srv.Received("initialize") != 1 || h.srv.Received("tools/list") != 5 || h.srv.Received("notifications/initialized") != 0 {
		t.Errorf("Received: initialize %d, tools/list %d, initialized %d; want 1, 5, 0",
			h.srv.Received("initialize"), h.srv.Received("tools/list"), h.srv.Received("notifications/initialized"))
	}
}

func TestHTTPModernEra(t *testing.T) {
	h := startHTTP(t, probetest.Config{Era: probetest.EraModern})

	status, discover := h.modernCall("server/discover", nil)
	var versions []string
	discover.field(t, "supportedVersions", &versions)
	var resultType string
	discover.field(t, "resultType", &resultType)
	if status != 200 || !slices.Equal(versions, []string{"2026-07-28"}) || resultType != "complete" {
		t.Errorf("server/discover: %d %s", status, discover)
	}
	status, list := h.modernCall("tools/list", nil)
	if got := list.list(t); status != 200 || !slices.Equal(got.names(), reportTools) || got.ResultType != "complete" || got.TTLMs == nil {
		t.Errorf("tools/list: %d %s", status, list)
	}
	if h.srv.Received("initialize") != 0 || h.srv.Sessions() != 0 {
		t.Errorf("a modern exchange left %d initialize and %d sessions", h.srv.Received("initialize"), h.srv.Sessions())
	}

	tests := []struct {
		name       string
		msg        map[string]any
		headers    http.Header
		wantStatus int
		wantCode   int
	}{
		{"no _meta", h.request("tools/list", nil), modernHeaders("tools/list"), 400, -32602},
		{"unsupported version", h.request("tools/list", modernParams("1900-01-01", nil)),
			http.Header{"Mcp-Protocol-Version": {"1900-01-01"}, "Mcp-Method": {"tools/list"}}, 400, -32022},
		{"header version differs", h.request("tools/list", modernParams("2026-07-28", nil)),
			http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"tools/list"}}, 400, -32020},
		{"no Mcp-Method", h.request("tools/list", modernParams("2026-07-28", nil)),
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}, 400, -32020},
		{"Mcp-Name differs", h.request("tools/call", modernParams("2026-07-28", map[string]any{"name": "list_report_dates"})),
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}, 400, -32020},
		{"unknown method", h.request("resources/list", modernParams("2026-07-28", nil)), modernHeaders("resources/list"), 404, -32601},
		{"initialize", h.request("initialize", initializeParams("2025-11-25")), nil, 400, -32602},
		{"base64 Mcp-Name", h.request("tools/call", modernParams("2026-07-28", map[string]any{"name": "list_report_dates"})),
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?bGlzdF9yZXBvcnRfZGF0ZXM=?="}}, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := h.post(tt.msg, tt.headers)
			if m := decodeMsg(t, body); resp.StatusCode != tt.wantStatus || m.errorCode() != tt.wantCode {
				t.Errorf("%d %s, want %d with code %d", resp.StatusCode, body, tt.wantStatus, tt.wantCode)
			}
		})
	}
	if h.srv.Received("initialize") != 1 {
		t.Errorf("Received(initialize) = %d, want 1", h.srv.Received("initialize"))
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, h.url, nil)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s on a modern server: %d, Allow %q; want 405, POST", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

func TestHTTPDualEraServesBoth(t *testing.T) {
	h := startHTTP(t, probetest.Config{Era: probetest.EraDual})
	status, discover := h.modernCall("server/discover", nil)
	var versions []string
	discover.field(t, "supportedVersions", &versions)
	if status != 200 || len(versions) != 5 {
		t.Errorf("server/discover: %d %s", status, discover)
	}
	id := h.session("2025-11-25")
	resp, body := h.post(h.request("tools/list", nil), sessionHeader(id))
	if got := decodeMsg(t, body).list(t); resp.StatusCode != 200 || got.ResultType != "" || len(got.Tools) != 2 {
		t.Errorf("legacy tools/list: %d %s", resp.StatusCode, body)
	}
}

func TestHTTPRejectsWrongMediaTypes(t *testing.T) {
	h := startHTTP(t, probetest.Config{})
	tests := []struct {
		name        string
		contentType string
		accept      string
		want        int
	}{
		{"json only", "application/json", "application/json", 406},
		{"sse only", "application/json", "text/event-stream", 406},
		{"wildcard", "application/json", "*/*", 200},
		{"text body", "text/plain", "application/json, text/event-stream", 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(h.request("initialize", initializeParams("2025-11-25")))
			req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", tt.contentType)
			req.Header.Set("Accept", tt.accept)
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

func TestHTTPSSEResponses(t *testing.T) {
	h := startHTTP(t, probetest.Config{Era: probetest.EraDual, SSEResponses: true})
	resp, body := h.post(h.request("server/discover", modernParams("2026-07-28", nil)), modernHeaders("server/discover"))
	evs := events(t, body)
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(evs) != 2 {
		t.Fatalf("%s with %d events: %q", resp.Header.Get("Content-Type"), len(evs), body)
	}
	if evs[0].id == "" || evs[0].data != "" || !evs[0].hasData {
		t.Errorf("first event %+v, want a priming event (an id and empty data)", evs[0])
	}
	var versions []string
	decodeMsg(t, []byte(evs[1].data)).field(t, "supportedVersions", &versions)
	if evs[1].name != "message" || len(versions) == 0 {
		t.Errorf("second event %+v, want the reply", evs[1])
	}
	// Errors keep their status and stay JSON.
	resp, body = h.post(h.request("tools/list", modernParams("1900-01-01", nil)), nil)
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("error reply: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestHTTPToolSetsDependOnTheBearerToken(t *testing.T) {
	tests := []struct {
		name  string
		cfg   probetest.Config
		token string // "" sends no Authorization
		want  []string
	}{
		{"gated right token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, "s3cret", reportTools},
		{"gated no token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, "", nil},
		{"gated wrong token", probetest.Config{Behavior: probetest.TokenGated, Token: "s3cret"}, "nope", nil},
		{"gated any token", probetest.Config{Behavior: probetest.TokenGated}, "x", reportTools},
		{"scoped no token", probetest.Config{Behavior: probetest.Scoped, Token: "s3cret"}, "", []string{"list_report_dates"}},
		{"scoped other token", probetest.Config{Behavior: probetest.Scoped, Token: "s3cret"}, "reader", []string{"list_report_dates"}},
		{"scoped full token", probetest.Config{Behavior: probetest.Scoped, Token: "s3cret"}, "s3cret", reportTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Era = probetest.EraModern
			h := startHTTP(t, cfg)
			headers := modernHeaders("tools/list")
			if tt.token != "" {
				headers = withBearer(headers, tt.token)
			}
			resp, body := h.post(h.request("tools/list", modernParams("2026-07-28", nil)), headers)
			got := decodeMsg(t, body).list(t)
			if resp.StatusCode != 200 || !slices.Equal(got.names(), tt.want) || got.CacheScope != "private" {
				t.Errorf("%d: tools %v (cacheScope %q), want 200, %v, private", resp.StatusCode, got.names(), got.CacheScope, tt.want)
			}
		})
	}
}

func TestHTTPPagination(t *testing.T) {
	t.Run("many tools", func(t *testing.T) {
		h := startHTTP(t, probetest.Config{Behavior: probetest.ManyTools, Era: probetest.EraModern})
		var names []string
		params := map[string]any{}
		for pages := 1; ; pages++ {
			_, m := h.modernCall("tools/list", params)
			page := m.list(t)
			names = append(names, page.names()...)
			if page.NextCursor == nil {
				if pages != 10 || len(names) != 1000 || names[999] != "tool_0999" {
					t.Errorf("%d pages, %d tools, last %q", pages, len(names), names[len(names)-1])
				}
				return
			}
			if pages > 10 {
				t.Fatal("more than 10 pages")
			}
			params = map[string]any{"cursor": *page.NextCursor}
		}
	})
	t.Run("stuck cursor", func(t *testing.T) {
		h := startHTTP(t, probetest.Config{Behavior: probetest.StuckCursor, Era: probetest.EraModern})
		_, first := h.modernCall("tools/list", nil)
		_, second := h.modernCall("tools/list", map[string]any{"cursor": *first.list(t).NextCursor})
		if got := second.list(t).NextCursor; got == nil || *got != probetest.StuckCursorValue {
			t.Errorf("second cursor %v, want %q again", got, probetest.StuckCursorValue)
		}
	})
}

func TestHTTPAuthFailures(t *testing.T) {
	t.Run("401", func(t *testing.T) {
		h := startHTTP(t, probetest.Config{Behavior: probetest.Unauthorized401, Token: "s3cret"})
		for _, token := range []string{"", "wrong"} {
			headers := http.Header{}
			if token != "" {
				headers = withBearer(headers, token)
			}
			resp, _ := h.post(h.request("initialize", initializeParams("2025-11-25")), headers)
			challenge := resp.Header.Get("WWW-Authenticate")
			want := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource", scope="reports:read"`,
				strings.TrimSuffix(h.url, "/mcp"))
			if resp.StatusCode != 401 || challenge != want {
				t.Errorf("token %q: %d %q, want 401 %q", token, resp.StatusCode, challenge, want)
			}
		}
		if h.srv.Received("initialize") != 2 {
			t.Errorf("Received(initialize) = %d, want 2 (counted although refused)", h.srv.Received("initialize"))
		}
		if resp, body := h.post(h.request("initialize", initializeParams("2025-11-25")), withBearer(nil, "s3cret")); resp.StatusCode != 200 {
			t.Errorf("the right token: %d %s, want 200", resp.StatusCode, body)
		}
		resp, err := h.client.Get(strings.TrimSuffix(h.url, "/mcp") + "/.well-known/oauth-protected-resource")
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || len(meta.AuthorizationServers) == 0 {
			t.Errorf("protected resource metadata: %d %+v %v", resp.StatusCode, meta, err)
		}
	})
	t.Run("403", func(t *testing.T) {
		h := startHTTP(t, probetest.Config{Behavior: probetest.InsufficientScope403})
		resp, _ := h.post(h.request("initialize", initializeParams("2025-11-25")), withBearer(nil, "x"))
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 403 || !strings.HasPrefix(challenge, `Bearer error="insufficient_scope", scope="reports:write", error_description="`) {
			t.Errorf("%d %q", resp.StatusCode, challenge)
		}
	})
	t.Run("500", func(t *testing.T) {
		h := startHTTP(t, probetest.Config{Behavior: probetest.ServerError500})
		if resp, _ := h.post(h.request("initialize", initializeParams("2025-11-25")), nil); resp.StatusCode != 500 {
			t.Errorf("status %d, want 500", resp.StatusCode)
		}
	})
}

func TestHTTPHangs(t *testing.T) {
	tests := []struct {
		behavior probetest.Behavior
		method   string
	}{
		{probetest.StallToolsList, "tools/list"},
		{probetest.Unresponsive, "initialize"},
	}
	for _, tt := range tests {
		t.Run(string(tt.behavior), func(t *testing.T) {
			h := startHTTP(t, probetest.Config{Behavior: tt.behavior, Era: probetest.EraModern})
			if tt.behavior == probetest.StallToolsList {
				if status, _ := h.modernCall("server/discover", nil); status != 200 {
					t.Fatalf("server/discover: %d", status)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			resp, body, err := h.do(ctx, h.request(tt.method, modernParams("2026-07-28", nil)), modernHeaders(tt.method))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v %v %s, want no answer before the client gives up", tt.method, resp, err, body)
			}
			if h.srv.Received(tt.method) != 1 {
				t.Errorf("Received(%s) = %d, want 1", tt.method, h.srv.Received(tt.method))
			}
		})
	}
}

func TestHTTPServerCloseReleasesHeldRequests(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.Unresponsive})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The handler returns without writing: any outcome will do.
		_, _, _ = h.do(context.Background(), h.request("initialize", initializeParams("2025-11-25")), nil)
	}()
	for h.srv.Received("initialize") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	h.srv.Close()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("Close did not release the request")
	}
}

func TestHTTPExitAtOnceDropsTheConnection(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.ExitAtOnce})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, _, err := h.do(ctx, h.request("initialize", initializeParams("2025-11-25")), nil)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a dropped connection", err)
	}
}

func TestHTTPHugeLine(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.HugeLine, Era: probetest.EraModern})
	body, _ := json.Marshal(h.request("server/discover", modernParams("2026-07-28", nil)))
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(string(body)))
	req.Header = modernHeaders("server/discover")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 48)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	rest, err := io.Copy(io.Discard, resp.Body)
	if size := int64(len(head)) + rest; err != nil || size < probetest.HugeLineBytes || !strings.HasPrefix(string(head), `{"jsonrpc":"2.0","id":1,"result":{"padding":"x`) {
		t.Errorf("body of %d bytes starting %q (%v), want at least %d", size, head, err, probetest.HugeLineBytes)
	}
	if status, m := h.modernCall("tools/list", nil); status != 200 || len(m.list(t).Tools) != 2 {
		t.Errorf("the request after: %d %s", status, m)
	}
}

func TestHTTPWrongID(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.WrongID, Era: probetest.EraModern})
	_, m := h.modernCall("tools/list", nil)
	if string(m.ID) == strconv.Itoa(h.nextID) || m.Result == nil {
		t.Errorf("reply id %s, want a result with an id other than %d", m.ID, h.nextID)
	}
}

func TestHTTPSlowBodyDrips(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.SlowBody})
	body, _ := json.Marshal(h.request("initialize", initializeParams("2025-11-25")))
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make([]byte, 3)
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if min := 3 * probetest.DripIntervalMS * time.Millisecond; resp.StatusCode != 200 || string(got) != `{"j` || elapsed < min {
		t.Errorf("%d, %q after %v; want 200 and 3 bytes in no less than %v", resp.StatusCode, got, elapsed, min)
	}
}

func TestHTTPPingFirst(t *testing.T) {
	tests := []struct {
		name     string
		answer   map[string]any
		wantCode int
	}{
		{"answered", map[string]any{"result": map[string]any{}}, 0},
		{"refused", map[string]any{"error": map[string]any{"code": -32601, "message": "no"}}, -32603},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHTTP(t, probetest.Config{Behavior: probetest.PingFirst})
			session := h.session("2025-11-25")
			body, _ := json.Marshal(h.request("tools/list", nil))
			listID := h.nextID
			req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(string(body)))
			req.Header = sessionHeader(session)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			priming, err1 := nextEvent(br)
			pingEvent, err2 := nextEvent(br)
			ping := decodeMsg(t, []byte(pingEvent.data))
			if resp.Header.Get("Content-Type") != "text/event-stream" || err1 != nil || err2 != nil || priming.data != "" || ping.Method != "ping" {
				t.Fatalf("stream opened with %+v, %+v (%v, %v); want priming, then a ping request", priming, pingEvent, err1, err2)
			}
			answer := map[string]any{"jsonrpc": "2.0", "id": ping.ID}
			for k, v := range tt.answer {
				answer[k] = v
			}
			if r, b := h.post(answer, sessionHeader(session)); r.StatusCode != 202 {
				t.Fatalf("the ping answer: %d %s, want 202", r.StatusCode, b)
			}
			final, err := nextEvent(br)
			if m := decodeMsg(t, []byte(final.data)); err != nil || string(m.ID) != strconv.Itoa(listID) || m.errorCode() != tt.wantCode {
				t.Errorf("final event %+v (%v), want the tools/list reply with error code %d", final, err, tt.wantCode)
			}
		})
	}
}

func TestHTTPListChangedPrecedesTheToolsListReply(t *testing.T) {
	h := startHTTP(t, probetest.Config{Behavior: probetest.ListChanged, Era: probetest.EraModern})
	resp, body := h.post(h.request("tools/list", modernParams("2026-07-28", nil)), modernHeaders("tools/list"))
	evs := events(t, body)
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(evs) != 3 {
		t.Fatalf("%s, %d events: %s", resp.Header.Get("Content-Type"), len(evs), body)
	}
	if n := decodeMsg(t, []byte(evs[1].data)); n.Method != "notifications/tools/list_changed" {
		t.Errorf("second event %+v, want the notification", evs[1])
	}
	if m := decodeMsg(t, []byte(evs[2].data)); len(m.list(t).Tools) != 2 {
		t.Errorf("third event %+v, want the reply", evs[2])
	}
}

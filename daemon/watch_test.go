package daemon

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func sdkTool(name string) (*mcp.Tool, mcp.ToolHandler) {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
}

// metricValue is the value of one series line of a scrape, "" when absent.
func metricValue(text, series string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// A server that announces a change of its tools is probed again at once,
// with an hourly schedule: the new tool is in /metrics without waiting.
func TestWatchChangesReprobes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func(*mcp.Server) http.Handler
	}{
		{"legacy streamable HTTP", func(s *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
		}},
		{"legacy HTTP+SSE", func(s *mcp.Server) http.Handler {
			return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
			server.AddTool(sdkTool("first"))
			ts := httptest.NewServer(tc.handler(server))
			t.Cleanup(func() {
				for ss := range server.Sessions() {
					_ = ss.Close()
				}
				ts.Close()
			})
			dir := t.TempDir()
			path := writeConfig(t, dir, map[string]any{
				"defaults": map[string]any{"schedule": "@every 1h"},
				"servers":  map[string]any{"changing": map[string]any{"url": ts.URL}},
			})
			h := start(t, path, Options{})
			up := `mcpwatch_change_listener_up{server="changing"}`
			waitFor(t, "the listener to be up", func() bool { return metricValue(h.metricsText(), up) == "1" })
			if got := metricValue(h.metricsText(), `mcpwatch_tools{server="changing"}`); got != "1" {
				t.Fatalf("mcpwatch_tools %q before the change, want 1", got)
			}

			server.AddTool(sdkTool("second"))
			waitFor(t, "the new tool in /metrics", func() bool {
				return metricValue(h.metricsText(), `mcpwatch_tools{server="changing"}`) == "2"
			})
			text := h.metricsText()
			if n := metricValue(text, `mcpwatch_change_notifications_total{server="changing"}`); n == "" || n == "0" {
				t.Errorf("mcpwatch_change_notifications_total %q", n)
			}
			st := h.status("changing")
			if st.Probes < 2 {
				t.Errorf("%d probes, want the change's after the first", st.Probes)
			}
		})
	}
}

// watch_changes: false holds no listener; a stdio server has none.
func TestWatchChangesOff(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	server.AddTool(sdkTool("first"))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute}))
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			_ = ss.Close()
		}
		ts.Close()
	})
	dir := t.TempDir()
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"quiet": map[string]any{"url": ts.URL, "watch_changes": false}},
	})
	h := start(t, path, Options{})
	waitFor(t, "the first probe", func() bool { return h.status("quiet").Probes >= 1 })
	if strings.Contains(h.metricsText(), "mcpwatch_change_listener_up{") {
		t.Error("a listener series for a server with watch_changes: false")
	}
}

// A server that floods its listening stream with change announcements is
// no longer read: the stream is stopped, the stop counted in
// mcpwatch_change_listener_floods_total, and the notifications counted stay
// at the flood limit, not at what the server sent.
func TestWatchChangesFloodStops(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "flooding", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	server.AddTool(sdkTool("first"))
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
	const sent = 20 * floodLimit
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			sdk.ServeHTTP(w, r)
			return
		}
		// The session's listening stream: the flood, then held open.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for range sent {
			_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			_ = ss.Close()
		}
		ts.CloseClientConnections()
		ts.Close()
	})
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"flooding": map[string]any{"url": ts.URL, "watch_changes": true}},
	})
	h := start(t, path, Options{})
	floods := `mcpwatch_change_listener_floods_total{server="flooding"}`
	up := `mcpwatch_change_listener_up{server="flooding"}`
	waitFor(t, "the flood to be counted and the stream stopped", func() bool {
		text := h.metricsText()
		return metricValue(text, floods) == "1" && metricValue(text, up) == "0"
	})
	text := h.metricsText()
	if n := metricValue(text, `mcpwatch_change_notifications_total{server="flooding"}`); n != strconv.Itoa(floodLimit) {
		t.Errorf("%s notifications read, want %d: the stream was read past the flood", n, floodLimit)
	}
}

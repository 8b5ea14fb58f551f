package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// legacySSEServer is a legacy HTTP+SSE server whose initialize result
// names version, and which answers nothing else.
func legacySSEServer(t *testing.T, version string) string {
	t.Helper()
	answers := make(chan []byte, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /messages\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case a := <-answers:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusAccepted)
		if m.Method == "initialize" {
			result, _ := json.Marshal(map[string]any{"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo": map[string]any{"name": "x", "version": "1"}})
			answers <- []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result))
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/sse"
}

// The probe and the change listener share one check of an initialize
// result: a protocolVersion over 64 bytes or with a control character is
// refused by both (the listener accepted them).
func TestInitializeResultOneCheck(t *testing.T) {
	for name, version := range map[string]string{
		"over 64 bytes":     "2024-11-05" + strings.Repeat("x", 60),
		"control character": "2024-11-05\x1b[31m",
	} {
		t.Run(name, func(t *testing.T) {
			target := probe.Target{URL: legacySSEServer(t, version), Transport: probe.TransportSSE, Era: probe.EraLegacy}
			ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel0()
			res := probe.Run(ctx0, target, probe.Options{})
			if res.OK || res.Reason != probe.ReasonProtocol {
				t.Errorf("probe: %s %q, want protocol", res.Reason, res.Error)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := probe.Listen(ctx, target, probe.ListenOptions{}, func() {})
			if err == nil || !strings.Contains(err.Error(), "not a version string") {
				t.Errorf("listener: %v, want the version refused", err)
			}
		})
	}
}

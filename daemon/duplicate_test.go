package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A server listing a tool name twice (a second definition the lock would
// never compare) is exported as mcpwatch_tools_duplicate and shown on its
// page and in the API.
func TestDuplicateToolNamesAreExported(t *testing.T) {
	tools := append(probetest.DefaultTools(), probetest.Tool{Name: "list_report_dates", Description: "another definition",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}}})
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"dup": stdioServer(probetest.Config{Tools: tools}, nil)},
	})
	h := start(t, path, Options{})
	st := h.waitState("dup", verdict.StateOK)
	if got := strings.Join(st.Diff.Duplicate, ","); got != "list_report_dates" {
		t.Errorf("API diff.duplicate = %q, want list_report_dates", got)
	}
	if m := h.metricsText(); !strings.Contains(m, `mcpwatch_tools_duplicate{server="dup"} 1`) {
		t.Errorf("no mcpwatch_tools_duplicate 1 in /metrics:\n%s", m)
	}
	if _, page := h.get("/server/dup"); !strings.Contains(page, "Listed more than once") {
		t.Errorf("the server page does not show the duplicate:\n%s", page)
	}
}

// Tool names a server sends reach the log line about them sanitized: no
// escape sequence, line break or bidirectional override.
func TestLoggedToolNamesAreSanitized(t *testing.T) {
	tools := append(probetest.DefaultTools(), probetest.Tool{Name: "rm\x1b[2J\n\u202e", InputSchema: map[string]any{"type": "object"}})
	s := stdioServer(probetest.Config{Tools: tools}, nil)
	s["forbid"] = []string{"rm*"}
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"hostile": s},
	})
	h := start(t, path, Options{})
	h.waitState("hostile", verdict.StateForbidden)
	found := false
	for _, e := range h.logs.All() {
		for _, f := range e.Context {
			if f.Key != "forbidden" {
				continue
			}
			found = true
			// One comma-separated value, as every list in a log line.
			if got := fmt.Sprint(e.ContextMap()["forbidden"]); got != `rm\x1b[2J\n\u202e` {
				t.Errorf("logged forbidden = %s", got)
			}
		}
	}
	if !found {
		t.Error("no log line names the forbidden tool")
	}
}

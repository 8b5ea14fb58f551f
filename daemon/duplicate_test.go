package daemon

import (
	"strings"
	"testing"

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
	st := h.waitState("dup", StateOK)
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

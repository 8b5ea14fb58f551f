package daemon

import (
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The lines about a server's state name lists one way (missing=a,b and
// was_missing=a,b alike), and a failure carries the whole stderr tail.
func TestTransitionLogShape(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	writeFile(t, dir, "token", "")
	gated := stdioServer(probetest.Config{Behavior: probetest.TokenGated}, map[string]string{"REPORT_API_TOKEN": "${file:token}"})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers": map[string]any{
			"report": gated,
			"stall":  merge(stdioServer(probetest.Config{Behavior: probetest.StallToolsList}, nil), map[string]any{"timeout": "500ms"}),
		},
	})
	h := start(t, path, Options{})
	h.waitState("report", verdict.StateMissing)
	h.waitState("stall", verdict.StateFailed)
	writeFile(t, dir, "token", "example-token")
	if code, body := h.get("/probe?server=report"); code != 200 {
		t.Fatalf("/probe = %d %s", code, body)
	}
	h.waitState("report", verdict.StateOK)

	fields := func(server, msg string) map[string]any {
		for _, e := range h.logs.All() {
			if e.Message == msg && e.ContextMap()["server"] == server {
				return e.ContextMap()
			}
		}
		t.Fatalf("no line %q for %s:\n%v", msg, server, h.messages(server))
		return nil
	}
	missing := fields("report", "first probe: locked tools missing")
	if got := missing["missing"]; got != "fetch_daily_report,list_report_dates" {
		t.Errorf("missing = %#v, want fetch_daily_report,list_report_dates", got)
	}
	recovered := fields("report", "recovered")
	if recovered["was"] != "missing" || recovered["was_missing"] != missing["missing"] {
		t.Errorf("recovered: was=%#v was_missing=%#v; want missing and the same list as missing=", recovered["was"], recovered["was_missing"])
	}
	failed := fields("stall", "first probe: probe failed")
	stderr, _ := failed["stderr"].(string)
	if !strings.Contains(stderr, "recv initialize") || !strings.Contains(stderr, "recv tools/list") || strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr = %q, want the whole tail, every line", stderr)
	}
}

package daemon

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const reportLock = `{"report": ["fetch_daily_report", "list_report_dates"]}` + "\n"

// A credential read from a file that is emptied while the daemon runs (a
// revoked secret) makes the server list no tools: the daemon reports both
// locked tools missing, by name, in one log line however many probes see
// it; written back, the server recovers, in one more line, without a
// restart. The probes after the first are asked for one at a time, so the
// file changes only between two probes.
func TestTokenFileEmptiedAndRestored(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "example-token\n")
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "timeout": "10s"},
		"servers": map[string]any{
			"report": stdioServer(probetest.Config{Behavior: probetest.TokenGated},
				map[string]string{"REPORT_API_TOKEN": "${file:token}"}),
		},
	})
	h := start(t, path, Options{})
	probeTwice := func() apiServer {
		t.Helper()
		for range 2 {
			if code, body := h.get("/probe?server=report"); code != http.StatusOK {
				t.Fatalf("/probe = %d %s", code, body)
			}
		}
		return h.status("report")
	}

	h.waitState("report", verdict.StateOK)

	if err := os.WriteFile(token, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st := probeTwice()
	if st.State != verdict.StateMissing {
		t.Fatalf("state %s with the token file empty, want missing", st.State)
	}
	if got := strings.Join(st.Diff.Missing, " "); got != "fetch_daily_report list_report_dates" {
		t.Errorf("missing = %q, want both report tools", got)
	}
	if st.ToolsSeen != 0 || st.ToolsExpected != 2 {
		t.Errorf("tools seen/expected = %d/%d, want 0/2", st.ToolsSeen, st.ToolsExpected)
	}
	m := h.metricsText()
	for _, want := range []string{
		`mcpwatch_tools_missing{server="report"} 2`,
		`mcpwatch_tool_missing{server="report",tool="fetch_daily_report"} 1`,
		`mcpwatch_tool_missing{server="report",tool="list_report_dates"} 1`,
		`mcpwatch_probe_success{server="report"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	code, page := h.get("/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	for _, want := range []string{"fetch_daily_report", "list_report_dates", "MISSING"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}

	if err := os.WriteFile(token, []byte("example-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := probeTwice(); st.State != verdict.StateOK {
		t.Fatalf("state %s once the token is back, want ok", st.State)
	}
	if m := h.metricsText(); !strings.Contains(m, `mcpwatch_tools_missing{server="report"} 0`) {
		t.Errorf("/metrics after the token came back lacks missing 0")
	}

	msgs := h.messages("report")
	if got := count(msgs, "locked tools missing"); got != 1 {
		t.Errorf("%d 'locked tools missing' lines, want 1; lines: %q", got, msgs)
	}
	if got := count(msgs, "recovered"); got != 1 {
		t.Errorf("%d 'recovered' lines, want 1; lines: %q", got, msgs)
	}
	if got := count(msgs, "first probe: ok"); got != 1 {
		t.Errorf("%d 'first probe: ok' lines, want 1; lines: %q", got, msgs)
	}
	if len(msgs) != 3 {
		t.Errorf("info lines about the server: %q, want exactly the three state changes", msgs)
	}
	for _, e := range h.logs.All() {
		if strings.Contains(e.Message, "example-token") {
			t.Errorf("a log line holds the token: %q", e.Message)
		}
		for k, v := range e.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, "example-token") {
				t.Errorf("log field %s holds the token", k)
			}
		}
	}
}

// A secret file that does not exist is a wiring fault: the probe fails
// with reason config and an error naming the file, not an empty credential.
func TestMissingSecretFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers": map[string]any{
			"report": stdioServer(probetest.Config{Behavior: probetest.TokenGated},
				map[string]string{"REPORT_API_TOKEN": "${file:secrets/absent-token}"}),
		},
	})
	h := start(t, path, Options{})

	st := h.waitState("report", verdict.StateFailed)
	if st.Reason != probe.ReasonConfig {
		t.Errorf("reason = %q, want %q", st.Reason, probe.ReasonConfig)
	}
	if want := filepath.Join("secrets", "absent-token"); !strings.Contains(st.Error, want) {
		t.Errorf("error %q does not name the file %s", st.Error, want)
	}
	if len(st.Diff.Missing) != 0 {
		t.Errorf("a failed probe reports missing tools %v; it observed nothing", st.Diff.Missing)
	}
	if m := h.metricsText(); !strings.Contains(m, `mcpwatch_probe_failures_total{reason="config",server="report"}`) {
		t.Errorf("/metrics lacks the config failure counter")
	}
	msgs := h.messages("report")
	if !slices.Contains(msgs, "first probe: probe failed") || len(msgs) != 1 {
		t.Errorf("log lines about the server: %q, want one 'first probe: probe failed'", msgs)
	}
}

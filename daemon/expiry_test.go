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
// secret gone) is credential_missing, naming the credential: the server is
// not probed, since without its credential it would only list fewer
// tools. A wrong token written there instead is a probe of a server that
// lists no tools: both locked tools missing, by name. Written back, the
// server recovers, without a restart; each change is one log line however
// many probes see it. The probes after the first are asked for one at a
// time, so the file changes only between two probes.
func TestTokenFileEmptiedAndRestored(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "example-token\n")
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "timeout": "10s"},
		"servers": map[string]any{
			"report": stdioServer(probetest.Config{Behavior: probetest.TokenGated, Token: "example-token"},
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
	if m := h.metricsText(); !strings.Contains(m, `mcpwatch_credential_present{credential="env:REPORT_API_TOKEN",server="report"} 1`) {
		t.Errorf("/metrics lacks the credential, present")
	}

	if err := os.WriteFile(token, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st := probeTwice()
	if st.State != verdict.StateCredentialMissing {
		t.Fatalf("state %s with the token file empty, want credential_missing", st.State)
	}
	if st.Credential != "env:REPORT_API_TOKEN" || st.Reason != probe.ReasonCredentialMissing || !strings.Contains(st.Error, "token (${file:...}) is empty") {
		t.Errorf("credential %q, reason %q, error %q", st.Credential, st.Reason, st.Error)
	}
	m := h.metricsText()
	for _, want := range []string{
		`mcpwatch_credential_present{credential="env:REPORT_API_TOKEN",server="report"} 0`,
		`mcpwatch_probe_success{server="report"} 0`,
		`mcpwatch_probe_failures_total{reason="credential_missing",server="report"} 2`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	code, page := h.get("/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	for _, want := range []string{"CREDENTIAL_MISSING", "env:REPORT_API_TOKEN is empty"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}

	if err := os.WriteFile(token, []byte("a-wrong-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st = probeTwice()
	if st.State != verdict.StateMissing {
		t.Fatalf("state %s with a wrong token, want missing", st.State)
	}
	if got := strings.Join(st.Diff.Missing, " "); got != "fetch_daily_report list_report_dates" {
		t.Errorf("missing = %q, want both report tools", got)
	}
	if st.ToolsSeen != 0 || st.ToolsExpected != 2 {
		t.Errorf("tools seen/expected = %d/%d, want 0/2", st.ToolsSeen, st.ToolsExpected)
	}
	m = h.metricsText()
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
	_, page = h.get("/")
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
	for _, line := range []string{"first probe: ok", "credential missing", "locked tools missing", "recovered"} {
		if got := count(msgs, line); got != 1 {
			t.Errorf("%d %q lines, want 1; lines: %q", got, line, msgs)
		}
	}
	if len(msgs) != 4 {
		t.Errorf("info lines about the server: %q, want exactly the four state changes", msgs)
	}
	for _, e := range h.logs.All() {
		for _, secret := range []string{"example-token", "a-wrong-token"} {
			if strings.Contains(e.Message, secret) {
				t.Errorf("a log line holds the token: %q", e.Message)
			}
			for k, v := range e.ContextMap() {
				if s, ok := v.(string); ok && strings.Contains(s, secret) {
					t.Errorf("log field %s holds the token", k)
				}
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

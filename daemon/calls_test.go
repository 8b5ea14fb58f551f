package daemon

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// kitURL serves a probetest server over streamable HTTP for the test.
func kitURL(t *testing.T, cfg probetest.Config) (*probetest.Server, string) {
	t.Helper()
	kit := probetest.NewServer(cfg)
	srv := httptest.NewServer(kit)
	t.Cleanup(func() { kit.Close(); srv.Close() })
	return kit, srv.URL + "/mcp"
}

var twoContracts = map[string]any{
	"fetch_daily_report": map[string]any{"input": map[string]any{"date": "2026-08-01"},
		// The daemon makes one call per schedule whatever the policy: its next
		// scheduled call is the retry.
		"retry":  map[string]any{"attempts": 3, "delayMs": 1},
		"expect": map[string]any{"contains": "orders"}},
	"list_report_dates": map[string]any{"expect": map[string]any{"contains": "2026-08-01"}},
}

// A server that lists both tools and fails every call: the surface is OK,
// the calls go red, with the reason and what came back; a healthy one with
// the same contracts passes.
func TestDaemonCalls(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report", "list_report_dates"], "healthy": ["fetch_daily_report", "list_report_dates"]}`)
	failing, failingURL := kitURL(t, probetest.Config{Behavior: probetest.CallIsError})
	healthy, healthyURL := kitURL(t, probetest.Config{})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 150ms"},
		"servers": map[string]any{
			"report":  map[string]any{"url": failingURL, "calls": twoContracts},
			"healthy": map[string]any{"url": healthyURL, "calls": twoContracts},
		},
	})
	h := start(t, path, Options{})

	st := h.waitState("report", verdict.StateCallFailed)
	if len(st.Calls) != 2 || st.Calls[0].Reason != "is_error" || !strings.Contains(st.Calls[0].Message, probetest.CallFailureText) {
		t.Fatalf("calls: %+v", st.Calls)
	}
	h.waitState("healthy", verdict.StateOK)
	waitFor(t, "both servers' calls", func() bool {
		m := h.metricsText()
		return strings.Contains(m, `mcpwatch_call_success{server="report",tool="fetch_daily_report"} 0`) &&
			strings.Contains(m, `mcpwatch_call_success{server="healthy",tool="list_report_dates"} 1`) &&
			strings.Contains(m, `mcpwatch_call_failures_total{reason="is_error",server="report",tool="list_report_dates"} `)
	})
	m := h.metricsText()
	for _, want := range []string{
		`mcpwatch_call_interval_seconds{server="report"} 0.15`,
		`mcpwatch_call_failures_total{reason="is_error",server="healthy",tool="fetch_daily_report"} 0`,
		`mcpwatch_last_call_timestamp_seconds{server="report",tool="fetch_daily_report"} `,
		`mcpwatch_call_duration_seconds{server="healthy",tool="fetch_daily_report"} `,
		`mcpwatch_probe_success{server="report"} 1`,
		`mcpwatch_call_last_failure_info{reason="is_error",server="report",tool="fetch_daily_report"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(m, `mcpwatch_call_last_failure_info{reason="is_error",server="healthy"`) {
		t.Errorf("/metrics names a failure reason for a server whose calls pass")
	}
	_, page := h.get("/")
	for _, want := range []string{"CALL_FAILED", "calls 0/2 OK", "calls 2/2 OK", "<code>fetch_daily_report</code> <strong>is_error</strong>"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	_, page = h.get("/server/report")
	for _, want := range []string{"Canary calls", "what came back", "isError: " + probetest.CallFailureText} {
		if !strings.Contains(page, want) {
			t.Errorf("server page lacks %q", want)
		}
	}
	if count(h.messages("report"), "first probe: tool calls failing")+count(h.messages("report"), "tool calls failing") == 0 {
		t.Errorf("no line about the failing calls: %v", h.messages("report"))
	}

	// Stopped, every call the servers received was recorded, once per tool
	// per firing: no retries in the daemon (the failing server's contract
	// asks for 3 attempts), and the kit counts each call. A firing that Close
	// cut short is not recorded: up to one call per tool more reached the
	// server.
	if err := h.d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, kit := range map[string]*probetest.Server{"report": failing, "healthy": healthy} {
		s, _ := h.d.lookup(name)
		var recorded uint64
		for _, c := range s.snapshot().Calls {
			recorded += c.Calls
		}
		if got := uint64(max(kit.Received("tools/call"), 0)); got < recorded || got > recorded+2 || recorded < 2 {
			t.Errorf("%s: the server received %d calls, the daemon recorded %d", name, got, recorded)
		}
	}
}

// Contracts dropped on reload take their series with them.
func TestDaemonCallsReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	_, url := kitURL(t, probetest.Config{})
	doc := map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 100ms"},
		"servers":  map[string]any{"report": map[string]any{"url": url, "calls": twoContracts}},
	}
	path := writeConfig(t, dir, doc)
	h := start(t, path, Options{})
	waitFor(t, "a call", func() bool {
		return strings.Contains(h.metricsText(), `mcpwatch_call_success{server="report",tool="list_report_dates"} 1`)
	})
	doc["servers"] = map[string]any{"report": map[string]any{"url": url, "calls": map[string]any{"list_report_dates": map[string]any{}}}}
	doc["defaults"] = map[string]any{"schedule": "@every 1h"}
	writeConfig(t, dir, doc)
	if err := h.d.Reload(); err != nil {
		t.Fatal(err)
	}
	m := h.metricsText()
	if strings.Contains(m, `tool="fetch_daily_report"`) && strings.Contains(m, "mcpwatch_call_") {
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, "mcpwatch_call_") && strings.Contains(l, `tool="fetch_daily_report"`) {
				t.Errorf("stale series after its contract left: %s", l)
			}
		}
	}
	if !strings.Contains(m, `mcpwatch_call_success{server="report",tool="list_report_dates"} 1`) {
		t.Errorf("the kept contract lost its series")
	}
}

package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

var twoContracts = map[string]any{
	"fetch_daily_report": map[string]any{"input": map[string]any{"date": "2026-08-01"},
		// The daemon makes one call per schedule whatever the policy: its next
		// scheduled call is the retry.
		"retry":  map[string]any{"attempts": 3, "delayMs": 1},
		"expect": map[string]any{"contains": "orders"}},
	"list_report_dates": map[string]any{"expect": map[string]any{"contains": "2026-08-01"}},
}

const callFailureText = "upstream report service unavailable"

// A server that lists both tools and fails every call: the surface is OK,
// the calls go red, with the reason and what came back; a healthy one with
// the same contracts passes.
func TestDaemonCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report", "list_report_dates"], "healthy": ["fetch_daily_report", "list_report_dates"]}`)
		fake := newFakeProber()
		fake.set("report", func(s *fakeServer) {
			s.calls = map[string]contracts.Outcome{
				"fetch_daily_report": failedCall(callFailureText),
				"list_report_dates":  failedCall(callFailureText),
			}
		})
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 150ms"},
			"servers": map[string]any{
				"report":  fakeServerConfig(map[string]any{"calls": twoContracts}),
				"healthy": fakeServerConfig(map[string]any{"calls": twoContracts}),
			},
		}, fake, Options{})
		s.ready()
		s.advance(time.Second) // a few call firings each

		st := s.status("report")
		if st.State != verdict.StateCallFailed || len(st.Calls) != 2 || st.Calls[0].Reason != "is_error" || !strings.Contains(st.Calls[0].Message, callFailureText) {
			t.Fatalf("state %s, calls: %+v", st.State, st.Calls)
		}
		if st := s.status("healthy"); st.State != verdict.StateOK {
			t.Errorf("healthy: state %s, want ok", st.State)
		}
		m := s.metricsText()
		for _, want := range []string{
			`mcpwatch_call_success{server="report",tool="fetch_daily_report"} 0`,
			`mcpwatch_call_success{server="healthy",tool="list_report_dates"} 1`,
			`mcpwatch_call_failures_total{reason="is_error",server="report",tool="list_report_dates"} `,
			`mcpwatch_call_interval_seconds{server="report"} 0.15`,
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
		if strings.Contains(m, `mcpwatch_call_failures_total{reason="is_error",server="healthy"`) {
			t.Errorf("/metrics counts a failure reason of a tool that never failed with it")
		}
		_, page := s.get("/")
		for _, want := range []string{"CALL_FAILED", "calls 0/2 OK", "calls 2/2 OK", "<code>fetch_daily_report</code> <strong>is_error</strong>"} {
			if !strings.Contains(page, want) {
				t.Errorf("status page lacks %q", want)
			}
		}
		_, page = s.get("/server/report")
		for _, want := range []string{"Canary calls", "what came back", "isError: " + callFailureText} {
			if !strings.Contains(page, want) {
				t.Errorf("server page lacks %q", want)
			}
		}
		if count(s.messages("report"), "first probe: tool calls failing")+count(s.messages("report"), "tool calls failing") == 0 {
			t.Errorf("no line about the failing calls: %v", s.messages("report"))
		}

		// Stopped, every call firing made its calls once per tool: no
		// retries in the daemon (the contract asks for 3 attempts), and each
		// firing is recorded.
		if err := s.d.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"report", "healthy"} {
			var recorded uint64
			for _, c := range s.server(name).snapshot().Calls {
				recorded += c.Calls
			}
			f := fake.get(name)
			if f.retries != 0 || f.calling < 5 || recorded != uint64(2*f.calling) {
				t.Errorf("%s: %d call firings (%d asked to retry), %d calls recorded; want 2 a firing, none retried", name, f.calling, f.retries, recorded)
			}
		}
	})
}

// Contracts dropped on reload take their series with them.
func TestDaemonCallsReload(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", reportLock)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 100ms"},
			"servers":  map[string]any{"report": fakeServerConfig(map[string]any{"calls": twoContracts})},
		}, newFakeProber(), Options{})
		s.ready()
		if m := s.metricsText(); !strings.Contains(m, `mcpwatch_call_success{server="report",tool="list_report_dates"} 1`) {
			t.Fatalf("no call after the first round")
		}
		writeConfig(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"report": fakeServerConfig(map[string]any{"calls": map[string]any{"list_report_dates": map[string]any{}}})},
		})
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		m := s.metricsText()
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, "mcpwatch_call_") && strings.Contains(l, `tool="fetch_daily_report"`) {
				t.Errorf("stale series after its contract left: %s", l)
			}
		}
		if !strings.Contains(m, `mcpwatch_call_success{server="report",tool="list_report_dates"} 1`) {
			t.Errorf("the kept contract lost its series")
		}
	})
}

// calls: auto under defaults: the call firings call one read-only tool that
// needs no input; a failing one turns the server red, rejected credentials
// as such, and the history records the firing with its judged state; a
// probe that fails before the list counts the auto call not made; a reload
// that turns calls: auto off drops its series.
func TestDaemonAutoCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := newFakeProber()
		fake.set("github", func(s *fakeServer) { s.readOnly = []string{"list_report_dates"} })
		fake.set("bare", func(s *fakeServer) {}) // nothing read-only: nothing to call
		doc := map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 1m", "calls": "auto"},
			"servers": map[string]any{
				"github": fakeServerConfig(nil),
				"bare":   fakeServerConfig(nil),
			},
		}
		s := simulate(t, dir, doc, fake, Options{History: 5})
		s.ready()
		s.advance(2 * time.Minute)
		st := s.status("github")
		if st.State != verdict.StateOK || len(st.Calls) != 1 || st.Calls[0].Tool != "list_report_dates" {
			t.Fatalf("state %s, calls %+v: want list_report_dates, passing", st.State, st.Calls)
		}
		if st := s.status("bare"); len(st.Calls) != 0 || st.State != verdict.StateOK {
			t.Errorf("bare: state %s, calls %+v: want none", st.State, st.Calls)
		}
		if m := s.metricsText(); !strings.Contains(m, `mcpwatch_call_success{server="github",tool="list_report_dates"} 1`) {
			t.Errorf("/metrics lacks the auto call's success")
		}

		rejected := contracts.Outcome{Reason: probe.ReasonCredentialRejected, Message: "credential rejected: Bad credentials",
			Attempts: []contracts.Attempt{{Response: "isError: Bad credentials"}}}
		fake.set("github", func(s *fakeServer) { s.calls = map[string]contracts.Outcome{"list_report_dates": rejected} })
		s.advance(time.Minute)
		st = s.status("github")
		if st.State != verdict.StateCredentialRejected {
			t.Fatalf("state %s after a rejected auto call, want credential_rejected", st.State)
		}
		srv := s.server("github").details(true)
		if r := srv.History[0]; r.Trigger != triggerCalls || r.State != verdict.StateCredentialRejected {
			t.Errorf("the history's last record %+v: want the call firing, credential_rejected", r)
		}

		fake.set("github", func(s *fakeServer) { s.calls, s.fail = nil, "exited" })
		s.advance(time.Minute)
		c := s.server("github").snapshot().Calls
		if len(c) != 1 || c[0].Last.Reason != contracts.ReasonProbeFailed || c[0].Failures[contracts.ReasonProbeFailed] == 0 {
			t.Errorf("after a failed probe: %+v; want the auto call not made", c)
		}

		delete(doc["defaults"].(map[string]any), "calls")
		writeConfig(t, dir, doc)
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		s.settle()
		if c := s.server("github").snapshot().Calls; len(c) != 0 {
			t.Errorf("calls: auto is off, and the status keeps %+v", c)
		}
		if m := s.metricsText(); strings.Contains(m, `tool="list_report_dates"`) {
			t.Errorf("/metrics keeps the series of an auto call no longer made")
		}
	})
}

package daemon

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// A call firing whose canary call failed is judged once, calls included,
// and every output reads that judgement: the API's state and the firing's
// history record say call_failed, the record stays in the failure ring
// after passing probes push it out of the last ones, the server page's
// history shows it, and a debug /probe made meanwhile (which makes no
// calls) reports the server's state with its calls.
func TestCallFailureIsJudgedOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", reportLock)
		fake := newFakeProber()
		fake.set("report", func(s *fakeServer) {
			s.calls = map[string]contracts.Outcome{"fetch_daily_report": failedCall("upstream said 500")}
		})
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 10m"},
			"servers":  map[string]any{"report": fakeServerConfig(map[string]any{"calls": twoContracts})},
		}, fake, Options{History: 3})
		s.until("the first probe and the first calls", time.Minute, func() bool { return s.probes("report") == 2 })

		st := s.status("report")
		if st.State != verdict.StateCallFailed {
			t.Fatalf("state %s, want call_failed", st.State)
		}
		i := slices.IndexFunc(st.History, func(r Record) bool { return r.Trigger == triggerCalls })
		if i < 0 {
			t.Fatalf("no record of the call firing: %+v", st.History)
		}
		if r := st.History[i]; r.State != verdict.StateCallFailed || !slices.Equal(r.FailedCalls, []string{"fetch_daily_report"}) {
			t.Errorf("the call firing is recorded %s (failed calls %v), want call_failed naming fetch_daily_report", r.State, r.FailedCalls)
		}
		_, page := s.get("/server/report")
		if history := page[strings.Index(page, "Last probes"):]; strings.Count(history, ">CALL_FAILED<") == 0 || !strings.Contains(history, "fetch_daily_report") {
			t.Errorf("the server page's history does not show the failing call:\n%s", history)
		}

		code, report := s.get("/probe?server=report&debug=true")
		if code != http.StatusOK || !strings.Contains(report, "state:            call_failed\n") {
			t.Errorf("/probe?debug=true = %d, want the state with the calls (call_failed):\n%s", code, report)
		}

		// The calls pass again; three passing probes fill the last three.
		fake.set("report", func(s *fakeServer) { s.calls = nil })
		s.until("the server to recover", 20*time.Minute, func() bool { return s.server("report").snapshot().Judgement.State == verdict.StateOK })
		for range 3 {
			if code, body := s.get("/probe?server=report"); code != http.StatusOK {
				t.Fatalf("/probe = %d %s", code, body)
			}
		}
		st = s.status("report")
		if !slices.ContainsFunc(st.History, func(r Record) bool {
			return r.Trigger == triggerCalls && r.State == verdict.StateCallFailed
		}) {
			t.Errorf("the failure ring lost the failed call firing: %+v", st.History)
		}
		recovered := s.line("report", "recovered")
		if recovered["was"] != string(verdict.StateCallFailed) || recovered["was_calls"] != "fetch_daily_report" {
			t.Errorf("recovered: was=%v was_calls=%v", recovered["was"], recovered["was_calls"])
		}
	})
}

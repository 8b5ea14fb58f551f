package daemon

import (
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/probe"
)

// While a credential is missing the server is not probed and no call is
// made: its row shows no latency (not "0s", which reads as a fast probe)
// and says the calls are not made, not the "calls 2/2 OK" of the calls
// made before the credential went.
func TestRowWhileCredentialMissing(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	passed := &contracts.Outcome{Tool: "fetch_daily_report", Passed: true, Started: now.Add(-time.Minute), Duration: 40 * time.Millisecond}
	calls := []status.Call{{Tool: "fetch_daily_report", Last: passed, Calls: 3}, {Tool: "list_report_dates", Last: passed, Calls: 3}}
	st := status.Server{Name: "report", Calls: calls,
		Last: &probe.Result{Started: now.Add(-time.Second), Reason: probe.ReasonCredentialMissing, Error: "env:REPORT_API_TOKEN is empty"}}
	r := newRow(details{Status: st}, now)
	if r.Latency != "-" {
		t.Errorf("latency %q while not probed, want -", r.Latency)
	}
	if r.Calls.Paused == "" || r.Calls.OK != 2 {
		t.Errorf("calls %+v: want them paused, the 2 earlier passes kept for the server page", r.Calls)
	}

	st.Last = &probe.Result{OK: true, Started: now.Add(-time.Second), Timings: probe.Timings{Total: 1500 * time.Millisecond}}
	r = newRow(details{Status: st}, now)
	if r.Latency != "1.5s" || r.Calls.Paused != "" || r.Calls.OK != 2 {
		t.Errorf("once probed again: latency %q, calls %+v; want 1.5s and 2/2 OK", r.Latency, r.Calls)
	}
}

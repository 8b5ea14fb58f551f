package daemon

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A simulated month of the daemon at the defaults (call_schedule every
// 5 minutes), counting the calls made of each tool: the catalogue's
// metered canary of Brave's server at most 5% of its plan's 2,000 free
// calls, a generated input on a tool nobody vetted once an hour, a
// contract's own schedule as it says, a tool billed from its first call
// never, and any other on call_schedule. The server's contracts come from
// a hand-written file, as a person writes them.
func TestDaemonCallsAMonth(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", `{}`)
		writeFile(t, dir, "brave.tools.json", `{"tools": {
			"brave_web_search": {"input": {"query": "mcpwatch", "count": 1}},
			"brave_news_search": {"input": {"query": "mcpwatch"}, "schedule": "@every 8h"}}}`)
		fake := newFakeProber()
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 6h"},
			"servers": map[string]any{
				"brave": map[string]any{"command": "npx", "args": []any{"-y", "@brave/brave-search-mcp-server@2.1.4"}, "contracts": "brave.tools.json"},
				"perplexity": map[string]any{"command": "npx", "args": []any{"-y", "@perplexity-ai/mcp-server"},
					"calls": map[string]any{"perplexity_ask": map[string]any{"input": map[string]any{"messages": []any{}}, "expect": map[string]any{"status": "credentialAccepted"}}}},
				"report": fakeServerConfig(map[string]any{"calls": map[string]any{
					"fetch_daily_report": map[string]any{"input": map[string]any{"date": "mcpwatch"}, "expect": map[string]any{"status": "credentialAccepted"}},
					"list_report_dates":  map[string]any{},
				}}),
			},
		}, fake, Options{})
		s.ready()
		const month = 30 * 24 * time.Hour
		s.advance(month)

		got := map[string]int{}
		for _, name := range []string{"brave", "perplexity", "report"} {
			for tool, n := range fake.calledOf(name) {
				got[name+"/"+tool] = n
			}
		}
		var rows []string
		for k, n := range got {
			rows = append(rows, fmt.Sprintf("%-28s %6d", k, n))
		}
		sort.Strings(rows)
		t.Logf("calls in a simulated 30 days at the defaults (call_schedule @every 5m):\n%s", strings.Join(rows, "\n"))
		for key, want := range map[string][2]int{
			"brave/brave_web_search":    {96, 97},     // @every 7h27m: 2,000 x 5% = 100 in 31 days
			"brave/brave_news_search":   {90, 91},     // its own @every 8h
			"report/fetch_daily_report": {720, 721},   // a generated input: hourly
			"report/list_report_dates":  {8640, 8641}, // call_schedule
		} {
			if n := got[key]; n < want[0] || n > want[1] {
				t.Errorf("%s: %d calls in 30 days, want %d to %d", key, n, want[0], want[1])
			}
		}
		if n := got["perplexity/perplexity_ask"]; n != 0 {
			t.Errorf("perplexity_ask, billed from the first call, was called %d times", n)
		}
		a := s.status("brave")
		for _, c := range a.Calls {
			if c.Tool == "brave_web_search" && (c.Schedule != "@every 7h27m" || !strings.Contains(c.Paced, "2,000 free calls a month")) {
				t.Errorf("the API says of brave_web_search: schedule %q, paced %q", c.Schedule, c.Paced)
			}
		}
		if _, page := s.get("/server/brave"); !strings.Contains(page, "@every 7h27m") || !strings.Contains(page, "its contract&#39;s own schedule") {
			t.Errorf("the server page does not show each tool's schedule:\n%s", page)
		}
	})
}

// A rate limit or a quota in a call's answer holds the server's calls:
// until the wait the answer named, else for a wait that doubles with each
// limited round; the firings meanwhile are skipped (calls_backed_off),
// never retried on schedule; a round that is not limited ends the hold.
func TestDaemonCallsBackOff(t *testing.T) {
	limited := func(after time.Duration) contracts.Outcome {
		return contracts.Outcome{Reason: probe.ReasonRateLimited, Message: "rate limited: 429 Too Many Requests",
			RateLimit: &credential.RateLimit{Marker: "status 429", Quote: "429 Too Many Requests", RetryAfter: after}}
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		// calls in the first 6 hours: 72 at the schedule without a hold
		lo, hi int
	}{
		// The answer says 2h: a call at the start, then one each 2h and a
		// few minutes.
		{"as the answer says", 2 * time.Hour, 3, 4},
		// None said: 10m, 20m, 40m, 80m, 160m after each limited round.
		{"doubling", 0, 5, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, "mcp-tools.lock.json", `{}`)
				fake := newFakeProber()
				fake.set("search", func(s *fakeServer) {
					s.calls = map[string]contracts.Outcome{"list_report_dates": limited(tc.after)}
				})
				s := simulate(t, dir, map[string]any{
					"defaults": map[string]any{"schedule": "@every 1h"},
					"servers":  map[string]any{"search": fakeServerConfig(map[string]any{"calls": map[string]any{"list_report_dates": map[string]any{}}})},
				}, fake, Options{})
				s.ready()
				s.advance(6 * time.Hour)
				n := fake.calledOf("search")["list_report_dates"]
				if n < tc.lo || n > tc.hi {
					t.Errorf("%d calls in 6 hours of a rate limit, want %d to %d", n, tc.lo, tc.hi)
				}
				a := s.status("search")
				if b := a.CallsBackoff; b == nil || b.Tool != "list_report_dates" || b.Quote != "429 Too Many Requests" || b.Hinted != (tc.after > 0) || !b.Until.After(time.Now()) {
					t.Errorf("the API's hold: %+v", b)
				}
				if m := s.metricsText(); !strings.Contains(m, `mcpwatch_probes_skipped_total{reason="calls_backed_off"}`) ||
					!strings.Contains(m, `mcpwatch_call_failures_total{reason="rate_limited",server="search",tool="list_report_dates"}`) {
					t.Errorf("/metrics lacks the skipped firings or the failures:\n%s", m)
				}
				if _, page := s.get("/server/search"); !strings.Contains(page, "for a rate limit or a quota in list_report_dates") {
					t.Errorf("the server page does not say the calls are held")
				}

				// The limit goes: the next call made passes, and ends the hold.
				fake.set("search", func(s *fakeServer) { s.calls = nil })
				s.advance(24 * time.Hour)
				before := fake.calledOf("search")["list_report_dates"]
				s.advance(time.Hour)
				if n := fake.calledOf("search")["list_report_dates"] - before; n < 11 || n > 13 {
					t.Errorf("%d calls in the hour after the limit went, want 12", n)
				}
				if b := s.status("search").CallsBackoff; b != nil {
					t.Errorf("still held: %+v", b)
				}
			})
		})
	}
}

package preflight_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const seedLock = `{"report": ["fetch_daily_report", "list_report_dates"]}`

func withTools(extra ...string) []probetest.Tool {
	tools := probetest.DefaultTools()
	for _, name := range extra {
		tools = append(tools, probetest.Tool{Name: name, Description: "an extra tool",
			InputSchema: map[string]any{"type": "object"}})
	}
	return tools
}

// fingerprintLock locks the report tools with fingerprints of a schema the
// server does not have, and a description it does not use.
func fingerprintLock(t *testing.T) string {
	t.Helper()
	l := lockstore.New()
	l.Set("report", lockstore.NewEntry([]lockstore.Observed{
		{Name: "fetch_daily_report", Description: "Fetch the daily sales report", InputSchema: []byte(`{"type":"object","properties":{"day":{"type":"string"}}}`)},
		{Name: "list_report_dates", Description: "List every report date", InputSchema: []byte(`{"type":"object","properties":{}}`)},
	}, true))
	return string(l.Marshal())
}

func TestCheckVerdicts(t *testing.T) {
	token := map[string]string{"REPORT_API_TOKEN": "t0ken-value-1234"}
	tokenRead := map[string]string{"REPORT_API_TOKEN": "t0ken-value-1234", "REPORT_SCOPE": "read"}
	cases := []struct {
		name     string
		server   map[string]any
		lock     string
		strict   bool
		timeout  time.Duration
		wantOK   bool
		verdict  verdict.Kind
		messages []string // substrings of the problems' messages and details, in order
	}{
		{name: "token present", server: testServer(probetest.Config{Behavior: probetest.TokenGated}, token),
			lock: seedLock, wantOK: true, verdict: verdict.KindOK},
		{name: "token missing", server: testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
			lock: seedLock, verdict: verdict.KindMissing,
			messages: []string{"2/2 tools missing -> fetch_daily_report, list_report_dates"}},
		{name: "read scope", server: testServer(probetest.Config{Behavior: probetest.Scoped}, tokenRead),
			lock: seedLock, verdict: verdict.KindMissing,
			messages: []string{"1/2 tools missing -> fetch_daily_report"}},
		{name: "extra tool passes", server: testServer(probetest.Config{Tools: withTools("export_csv")}, nil),
			lock: seedLock, wantOK: true, verdict: verdict.KindOK,
			messages: []string{"1 extra tool not in the lock -> export_csv"}},
		{name: "extra tool fails strict", server: testServer(probetest.Config{Tools: withTools("export_csv")}, nil),
			lock: seedLock, strict: true, verdict: verdict.KindExtra,
			messages: []string{"1 extra tool not in the lock -> export_csv"}},
		{name: "duplicate tool name passes, reported", server: testServer(probetest.Config{Tools: withTools("list_report_dates")}, nil),
			lock: seedLock, wantOK: true, verdict: verdict.KindOK,
			messages: []string{"1 tool name listed more than once -> list_report_dates"}},
		{name: "duplicate tool name fails strict", server: testServer(probetest.Config{Tools: withTools("list_report_dates")}, nil),
			lock: seedLock, strict: true, verdict: verdict.KindDuplicate,
			messages: []string{"1 tool name listed more than once -> list_report_dates", "only the first definition is compared"}},
		{name: "changed fingerprints pass", server: testServer(probetest.Config{}, nil),
			lock: fingerprintLock(t), wantOK: true, verdict: verdict.KindOK,
			messages: []string{"input schema changed -> fetch_daily_report", "description changed -> list_report_dates"}},
		{name: "changed fingerprints fail strict", server: testServer(probetest.Config{}, nil),
			lock: fingerprintLock(t), strict: true, verdict: verdict.KindSchemaChanged,
			messages: []string{"input schema changed -> fetch_daily_report", "description changed -> list_report_dates"}},
		{name: "unlocked server passes", server: testServer(probetest.Config{}, nil),
			lock: `{}`, wantOK: true, verdict: verdict.KindOK,
			messages: []string{"not locked yet (2 tools seen): run 'mcpwatch lock --server report'"}},
		{name: "unlocked server fails strict", server: testServer(probetest.Config{}, nil),
			lock: `{}`, strict: true, verdict: verdict.KindUnlocked},
		{name: "stalled", server: testServer(probetest.Config{Behavior: probetest.StallToolsList}, nil),
			lock: seedLock, timeout: 1 * time.Second, verdict: verdict.KindProbeFailed,
			messages: []string{"probe failed (timeout)", "2/2 locked tools unverified -> fetch_daily_report, list_report_dates"}},
		{name: "exits at once", server: testServer(probetest.Config{Behavior: probetest.ExitAtOnce}, nil),
			lock: seedLock, verdict: verdict.KindProbeFailed,
			messages: []string{"probe failed (", "2/2 locked tools unverified", "| fatal: REPORT_API_TOKEN is not set"}},
		{name: "dies saying its key is rejected", server: map[string]any{"command": "/bin/sh", "args": []string{"-c",
			`echo '{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: rk_test_****"}}' >&2; exit 1`},
			"env": map[string]string{"STRIPE_SECRET_KEY": "rk_test_fake0000"}},
			lock: seedLock, verdict: verdict.KindCredentialRejected,
			messages: []string{"credential env:STRIPE_SECRET_KEY rejected: ", "Invalid API Key provided"}},
		{name: "dies saying its service is unreachable", server: map[string]any{"command": "/bin/sh", "args": []string{"-c",
			`echo 'Authentication failed - check your Slack tokens' >&2; echo 'dial tcp: lookup slack.com: no such host' >&2; exit 1`},
			"env": map[string]string{"SLACK_MCP_XOXP_TOKEN": "xoxp-fake-0000"}},
			lock: seedLock, verdict: verdict.KindUpstreamUnreachable,
			messages: []string{"the server could not reach its service (upstream_unreachable): ", "no such host"}},
		{name: "command not found", server: map[string]any{"command": "/nonexistent/no-such-binary"},
			lock: seedLock, verdict: verdict.KindProbeFailed,
			messages: []string{"probe failed (spawn_failed)", "no-such-binary"}},
		{name: "unset variable", server: map[string]any{"command": "/bin/true", "env": map[string]string{"REPORT_HOST": "${MCPWATCH_PREFLIGHT_TEST_UNSET}"}},
			lock: seedLock, verdict: verdict.KindConfigError,
			messages: []string{"config error: ", "MCPWATCH_PREFLIGHT_TEST_UNSET", "2/2 locked tools unverified"}},
		// A credential's variable unset is what an empty one is: missing.
		{name: "unset credential", server: map[string]any{"command": "/bin/true", "env": map[string]string{"REPORT_API_TOKEN": "${MCPWATCH_PREFLIGHT_TEST_UNSET}"}},
			lock: seedLock, verdict: verdict.KindCredentialMissing,
			messages: []string{"credential missing: env:REPORT_API_TOKEN has no value (${MCPWATCH_PREFLIGHT_TEST_UNSET} is not set): the server was not probed", "2/2 locked tools unverified"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := check(t, map[string]map[string]any{"report": tc.server}, tc.lock,
				preflight.Options{Strict: tc.strict, Timeout: tc.timeout})
			s := serverReport(t, r, "report")
			var text strings.Builder
			for _, p := range s.Problems {
				text.WriteString(p.Message + "\n" + strings.Join(p.Details, "\n") + "\n")
			}
			if r.OK != tc.wantOK || s.Verdict != tc.verdict || s.Failed == tc.wantOK {
				t.Errorf("ok %v verdict %q failed %v, want ok %v verdict %q; problems:\n%s", r.OK, s.Verdict, s.Failed, tc.wantOK, tc.verdict, text.String())
			}
			assertInOrder(t, text.String(), tc.messages...)
		})
	}
}

func TestCheckForbidden(t *testing.T) {
	server := testServer(probetest.Config{Tools: withTools("delete_report", "drop_all")}, nil)
	server["forbid"] = []string{"delete_*", "drop_*"}
	r := check(t, map[string]map[string]any{"report": server}, seedLock, preflight.Options{})
	s := serverReport(t, r, "report")
	if r.OK || s.Verdict != verdict.KindForbidden {
		t.Fatalf("ok %v verdict %q, want a forbidden failure: %+v", r.OK, s.Verdict, s.Problems)
	}
	want := "2 tools forbidden by delete_*, drop_* -> delete_report, drop_all"
	if got := s.Failures()[0].Message; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// A server in the lock but gone from the configuration fails without a
// probe; --server selects which servers are looked at.
func TestCheckLockedServerNotConfigured(t *testing.T) {
	lock := `{"gone": ["a_tool"], "report": ["fetch_daily_report", "list_report_dates"]}`
	servers := map[string]map[string]any{"report": testServer(probetest.Config{}, nil)}

	r := check(t, servers, lock, preflight.Options{})
	gone := serverReport(t, r, "gone")
	if r.OK || gone.Verdict != verdict.KindNotConfigured || gone.Probe != nil {
		t.Fatalf("ok %v, gone: %+v", r.OK, gone)
	}
	assertInOrder(t, gone.Problems[0].Message, "in the lock but not in mcpwatch.yml")
	if r.Totals != (preflight.Totals{Servers: 2, Failed: 1, ToolsLocked: 3, ToolsVerified: 2, ToolsSeen: 2}) {
		t.Errorf("totals %+v", r.Totals)
	}

	cfg := loadConfig(t, servers)
	only := preflight.Check(t.Context(), preflight.Input{Config: cfg, Lock: parseLock(t, lock), Servers: []string{"report"}}, preflight.Options{})
	if !only.OK || len(only.Servers) != 1 {
		t.Errorf("--server report: ok %v, servers %+v", only.OK, only.Servers)
	}
}

func assertInOrder(t *testing.T, text string, parts ...string) {
	t.Helper()
	rest := text
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("want %q (after the earlier parts) in:\n%s", p, text)
			return
		}
		rest = rest[i+len(p):]
	}
}

// A skipped server (--skip, ignore:) is neither probed nor judged: a broken
// one does not fail the run, and one that is only in the lock does not
// count as gone from the configuration.
func TestCheckSkip(t *testing.T) {
	lock := `{"broken": ["a_tool"], "ignored": ["b_tool"], "report": ["fetch_daily_report", "list_report_dates"]}`
	servers := map[string]map[string]any{
		"report": testServer(probetest.Config{}, nil),
		"broken": {"command": "/nonexistent/no-such-binary"},
	}
	cfg := loadConfig(t, servers)
	in := preflight.Input{Config: cfg, Lock: parseLock(t, lock)}

	all := preflight.Check(t.Context(), in, preflight.Options{})
	if all.OK || all.Totals.Failed != 2 {
		t.Fatalf("without skips: ok %v, totals %+v", all.OK, all.Totals)
	}
	in.Skip = []string{"ignored", "broken"}
	r := preflight.Check(t.Context(), in, preflight.Options{})
	if !r.OK || len(r.Servers) != 1 || r.Servers[0].Name != "report" || !slices.Equal(r.Skipped, []string{"broken", "ignored"}) {
		t.Fatalf("ok %v, servers %+v, skipped %q", r.OK, r.Servers, r.Skipped)
	}
	var text, junit strings.Builder
	if err := preflight.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, text.String(), "MCP preflight OK", "skipped (not probed, --skip or ignore:): broken, ignored")
	if err := preflight.WriteJUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, junit.String(), `skipped="2"`, `<testcase name="report"`, `<testcase name="broken"`, `<skipped message="not probed`)
}

// An unlocked server that cannot be probed says how to lock it once it
// answers.
func TestCheckNotLockedYet(t *testing.T) {
	cfg := loadConfig(t, map[string]map[string]any{"broken": {"command": "/nonexistent/no-such-binary"}})
	r := preflight.Check(t.Context(), preflight.Input{Config: cfg, Lock: parseLock(t, `{}`)}, preflight.Options{})
	s := serverReport(t, r, "broken")
	assertInOrder(t, strings.Join(s.Problems[0].Details, "\n"), "not locked yet: run 'mcpwatch lock --server broken' once it answers")
}

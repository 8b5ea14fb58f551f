package metrics_test

import (
	"slices"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// source is a status.Source whose statuses a test changes between scrapes,
// as the daemon does between probes and reloads.
type source struct {
	mu       sync.Mutex
	statuses []status.Server
}

func newSource(statuses ...status.Server) *source {
	return &source{statuses: statuses}
}

func (s *source) Statuses() []status.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

func (s *source) set(statuses ...status.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = statuses
}

// base is when the fixture's probes start: 1777636800 in Unix seconds.
var base = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func tools(names ...string) []probe.Tool {
	out := make([]probe.Tool, len(names))
	for i, n := range names {
		out[i] = probe.Tool{Name: n}
	}
	return out
}

// refreshFailures are the counts an OAuth client's status carries: every
// reason it knows, from 0, and n failures of one.
func refreshFailures(reason string, n uint64) map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range oauth.FailureReasons {
		m[r] = 0
	}
	m[reason] = n
	return m
}

// fixtureStatuses is a realistic daemon state, sorted by name:
//   - github: OK over HTTP, everything locked is there, one extra tool, one
//     schema change;
//   - newcomer: configured and locked, never probed yet;
//   - reports: OK over stdio, but 2 locked tools missing by name (the expired
//     credential of the example report server);
//   - scratch: OK, no lock entry, lists a forbidden tool;
//   - search: the last probe timed out; an earlier one succeeded over SSE.
func fixtureStatuses() []status.Server {
	github := &probe.Result{
		OK: true, Transport: probe.TransportHTTP, Era: probe.EraModern,
		ProtocolVersion: probe.VersionModern, ServerName: "github-mcp-server", ServerVersion: "1.4.0",
		Tools: tools("create_issue", "get_me", "list_issues", "search_code"), Pages: 2,
		Started: base,
		Timings: probe.Timings{Connect: ms(120), Handshake: ms(80), Pages: []time.Duration{ms(150), ms(50)}, Total: ms(400)},
		Credentials: &probe.CredentialStatus{
			OAuth: true, LastRefresh: base.Add(-time.Minute),
			RefreshFailures: refreshFailures("invalid_grant", 1),
			Expiries: []probe.CredentialExpiry{
				{Credential: "oauth_access_token", Expiry: base.Add(time.Hour), Renewed: true},
				{Credential: "oauth_refresh_token", Expiry: base.Add(30 * 24 * time.Hour)},
			},
		},
	}
	reports := &probe.Result{
		OK: true, Transport: probe.TransportStdio, Era: probe.EraLegacy,
		ProtocolVersion: "2025-06-18", ServerName: "report-server", ServerVersion: "0.3.1",
		Tools: tools("list_reports"), Pages: 1,
		Started: base.Add(time.Second),
		Timings: probe.Timings{Connect: ms(30), Handshake: ms(20), Pages: []time.Duration{ms(10)}, Total: ms(60)},
		Credentials: &probe.CredentialStatus{
			Expiries: []probe.CredentialExpiry{{Credential: "env:REPORT_API_TOKEN", Expiry: base.Add(2 * 24 * time.Hour)}},
			Given:    []probe.GivenCredential{{Credential: "env:REPORT_API_TOKEN", Present: true}},
			Issuer: []probe.IssuerCheck{
				{Credential: "env:GITHUB_TOKEN", Service: "github", Endpoint: "api.github.com GET /rate_limit", Verdict: probe.IssuerAccepted, Checked: base},
				{Credential: "env:GITLAB_TOKEN", Service: "gitlab", Endpoint: "gitlab.com/api/v4 GET /personal_access_tokens/self", Verdict: probe.IssuerRejected, Checked: base},
				{Credential: "env:SLACK_BOT_TOKEN", Service: "slack", Endpoint: "slack.com/api POST /auth.test", Verdict: probe.IssuerUnreachable, Checked: base},
			},
		},
	}
	scratch := &probe.Result{
		OK: true, Transport: probe.TransportStdio, Era: probe.EraLegacy,
		ProtocolVersion: "2025-11-25", ServerName: "scratch", ServerVersion: "dev",
		Tools: tools("echo", "rm_rf"), Pages: 1,
		Started: base.Add(2 * time.Second),
		Timings: probe.Timings{Connect: ms(5), Handshake: ms(5), Pages: []time.Duration{ms(5)}, Total: ms(15)},
	}
	searchEarlier := &probe.Result{
		OK: true, Transport: probe.TransportSSE, Era: probe.EraLegacy,
		ProtocolVersion: "2024-11-05", ServerName: "search", ServerVersion: "2.0",
		Tools: tools("query"), Pages: 1,
		Started: base.Add(-time.Hour),
		Timings: probe.Timings{Total: ms(250)},
	}
	searchTimeout := &probe.Result{
		OK: false, Reason: probe.ReasonTimeout, Error: "tools/list: no answer within 10s",
		Transport: probe.TransportSSE, Era: probe.EraLegacy,
		Started: base.Add(3 * time.Second),
		Timings: probe.Timings{Connect: ms(50), Handshake: ms(100), Total: 10 * time.Second},
	}
	slack := &probe.Result{
		OK: true, Transport: probe.TransportStdio, Era: probe.EraLegacy,
		ProtocolVersion: "2024-11-05", ServerName: "Slack MCP Server", ServerVersion: "1.0.0",
		Tools: tools("slack_list_channels"), Pages: 1,
		Started:     base.Add(4 * time.Second),
		Timings:     probe.Timings{Total: ms(900)},
		Credentials: &probe.CredentialStatus{Given: []probe.GivenCredential{{Credential: "env:SLACK_BOT_TOKEN", Present: true}}},
	}
	docs := &probe.Result{
		OK: true, Transport: probe.TransportStdio, Era: probe.EraLegacy,
		ProtocolVersion: "2025-06-18", ServerName: "Context7", ServerVersion: "4.1.1",
		Tools: tools("resolve-library-id"), Pages: 1,
		Started: base.Add(6 * time.Second),
		Timings: probe.Timings{Total: ms(700)},
	}
	vault := &probe.Result{
		OK: false, Reason: probe.ReasonCredentialMissing, Transport: probe.TransportStdio,
		Error:   "env:VAULT_TOKEN is empty (${VAULT_TOKEN} is set but empty): the server was not probed",
		Started: base.Add(5 * time.Second),
		Credentials: &probe.CredentialStatus{Given: []probe.GivenCredential{
			{Credential: "env:VAULT_ADDR_TOKEN", Present: true},
			{Credential: "env:VAULT_TOKEN", Present: false, Why: "${VAULT_TOKEN} is set but empty"},
		}},
	}
	// The requests of the last probes, as the daemon records them: github's
	// two pages and a canary call, reports's handshake, page and a call
	// answered isError, search's page that timed out.
	github.Operations = []probe.Operation{
		{Method: probe.MethodListTools, Duration: ms(150)},
		{Method: probe.MethodListTools, Duration: ms(50)},
		{Method: probe.MethodCallTool, Tool: "get_me", Duration: ms(25)},
	}
	reports.Operations = []probe.Operation{
		{Method: probe.MethodInitialize, Duration: ms(20)},
		{Method: probe.MethodListTools, Duration: ms(10)},
		{Method: probe.MethodCallTool, Tool: "list_reports", Duration: ms(40), ToolError: true},
	}
	searchTimeout.Operations = []probe.Operation{
		{Method: probe.MethodInitialize, Duration: ms(100)},
		{Method: probe.MethodListTools, Duration: 10*time.Second - ms(150), Error: probe.ReasonTimeout},
	}
	return []status.Server{
		{
			Name: "github", Transport: probe.TransportHTTP, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: github, LastOK: github, LastSuccess: base.Add(ms(400)),
			Diff: lockstore.Diff{
				Locked: true, Expected: []string{"create_issue", "list_issues", "search_code"},
				Extra: []string{"get_me"}, SchemaChanged: []string{"search_code"},
			},
			Probes: 120, Failures: map[probe.Reason]uint64{probe.ReasonTimeout: 2},
			Listener:   &status.Listener{Up: true, Notifications: 3},
			Operations: metrics.RecordOperations(nil, github),
			Calls: []status.Call{
				{Tool: "get_me", Calls: 2, Last: &contracts.Outcome{Tool: "get_me", Passed: true, Started: base, Duration: ms(25)}},
				{Tool: "list_issues"}, // contracted, not called yet
			},
		},
		{
			Name: "newcomer", Transport: probe.TransportStdio, Schedule: "@every 1m", Interval: time.Minute,
			Diff: lockstore.Diff{Locked: true, Expected: []string{"alpha", "beta"}},
		},
		{
			Name: "reports", Transport: probe.TransportStdio, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: reports, LastOK: reports, LastSuccess: base.Add(time.Second + ms(60)),
			Diff: lockstore.Diff{
				Locked: true, Expected: []string{"fetch_daily_report", "list_reports", "send_report"},
				Missing: []string{"fetch_daily_report", "send_report"},
			},
			Probes:     50,
			Operations: metrics.RecordOperations(nil, reports),
			// Its credential expired: the canary call fails too.
			Calls: []status.Call{{
				Tool: "list_reports", Calls: 4,
				Last: &contracts.Outcome{Tool: "list_reports", Reason: contracts.ReasonIsError,
					Message: "status: expected success, got isError: 401", Started: base.Add(2 * time.Second), Duration: ms(40)},
				Failures: map[probe.Reason]uint64{contracts.ReasonIsError: 3},
			}},
			CallInterval: 5 * time.Minute,
		},
		{
			// A cron schedule has no fixed interval: no interval series.
			Name: "scratch", Transport: probe.TransportStdio, Schedule: "*/5 * * * *",
			Last: scratch, LastOK: scratch, LastSuccess: base.Add(2*time.Second + ms(15)),
			Diff:   lockstore.Diff{Forbidden: []string{"rm_rf"}},
			Probes: 3,
		},
		{
			Name: "search", Transport: probe.TransportAuto, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: searchTimeout, LastOK: searchEarlier, LastSuccess: base.Add(-time.Hour + ms(250)),
			// The daemon may list every locked tool as missing after a
			// failure; the collector must not report them.
			Diff:   lockstore.Diff{Locked: true, Expected: []string{"query"}, Missing: []string{"query"}},
			Probes: 40, Failures: map[probe.Reason]uint64{probe.ReasonTimeout: 3, probe.ReasonConnection: 1},
			Operations: metrics.RecordOperations(nil, searchTimeout),
		},
		{
			// Lists its tools, and its canary call shows the token rejected.
			Name: "slack", Transport: probe.TransportStdio, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: slack, LastOK: slack, LastSuccess: base.Add(4*time.Second + ms(900)),
			Diff:   lockstore.Diff{Locked: true, Expected: []string{"slack_list_channels"}},
			Probes: 10,
			Calls: []status.Call{{
				Tool: "slack_list_channels", Calls: 1,
				Last: &contracts.Outcome{Tool: "slack_list_channels", Reason: probe.ReasonCredentialRejected,
					Message:   `credential env:SLACK_BOT_TOKEN rejected: {"ok":false,"error":"invalid_auth"}`,
					Rejection: &credential.Rejection{Credential: "env:SLACK_BOT_TOKEN", Marker: "invalid_auth", Quote: `{"ok":false,"error":"invalid_auth"}`},
					Started:   base.Add(5 * time.Second), Duration: ms(400)},
				Failures: map[probe.Reason]uint64{probe.ReasonCredentialRejected: 1},
			}},
			CallInterval: 5 * time.Minute,
			Judgement: verdict.Judgement{State: verdict.StateCredentialRejected, Credential: "env:SLACK_BOT_TOKEN", Calls: []string{"slack_list_channels"},
				Quote: `{"ok":false,"error":"invalid_auth"}`},
		},
		{
			// Lists its tools, and its canary call says its service cannot
			// be reached (a normal result, as Context7 answers it).
			Name: "docs", Transport: probe.TransportStdio, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: docs, LastOK: docs, LastSuccess: base.Add(6*time.Second + ms(700)),
			Diff:   lockstore.Diff{Locked: true, Expected: []string{"resolve-library-id"}},
			Probes: 5,
			Calls: []status.Call{{
				Tool: "resolve-library-id", Calls: 1,
				Last: &contracts.Outcome{Tool: "resolve-library-id", Reason: probe.ReasonUpstreamUnreachable,
					Message:  "upstream unreachable: Error searching libraries: TypeError: fetch failed",
					Upstream: &credential.Upstream{Marker: "fetch failed", Source: "a network failure", Quote: "Error searching libraries: TypeError: fetch failed"},
					Started:  base.Add(7 * time.Second), Duration: ms(300)},
				Failures: map[probe.Reason]uint64{probe.ReasonUpstreamUnreachable: 1},
			}},
			CallInterval: 5 * time.Minute,
			Judgement: verdict.Judgement{State: verdict.StateUpstreamUnreachable, Calls: []string{"resolve-library-id"},
				Quote: "Error searching libraries: TypeError: fetch failed"},
		},
		{
			// Its token file was emptied: not probed.
			Name: "vault", Transport: probe.TransportStdio, Schedule: "@every 30s", Interval: 30 * time.Second,
			Last: vault, Probes: 7, Failures: map[probe.Reason]uint64{probe.ReasonCredentialMissing: 1},
			Diff:      lockstore.Diff{Locked: true, Expected: []string{"read_secret"}},
			Judgement: verdict.Judgement{State: verdict.StateCredentialMissing, Reason: probe.ReasonCredentialMissing, Credential: "env:VAULT_TOKEN"},
		},
	}
}

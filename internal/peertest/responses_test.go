package peertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

var record = flag.Bool("record", false, "write testdata/peers/responses from the pinned servers' answers")

// The credentials the stand-ins take, and others they do not.
const (
	goodGitHubToken = "ghp_goodToken0000000000000000000000000"
	goodSlackToken  = "xoxb-good-0000-0000"
	goodBraveKey    = "BSAgoodKey000000000000"
	pgUser          = "mcp"
	pgPassword      = "good-db-password"
)

// responseCase is one call of a pinned server with one credential.
type responseCase struct {
	file       string
	pkg        string
	version    string
	credential string
	upstream   string
	env        map[string]string
	args       func(pg *peertest.Postgres) []string
	tool       string
	input      string
	rejected   bool
}

var responseCases = []responseCase{
	{file: "github-search-ok", pkg: peertest.GitHubServer, version: "2025.4.8", credential: "a good token",
		upstream: "200, one repository", env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": goodGitHubToken},
		tool: "search_repositories", input: `{"query":"mcp"}`},
	{file: "github-bad-credentials", pkg: peertest.GitHubServer, version: "2025.4.8", credential: "a revoked token",
		upstream: `401 {"message":"Bad credentials",...}`, env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_revokedToken000000000000000000000"},
		tool: "search_repositories", input: `{"query":"mcp"}`, rejected: true},
	{file: "github-empty-token-public-search", pkg: peertest.GitHubServer, version: "2025.4.8", credential: "an empty token (no Authorization sent)",
		upstream: "200, one repository (public data needs no token)", env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": ""},
		tool: "search_repositories", input: `{"query":"mcp"}`},
	{file: "slack-list-channels-ok", pkg: peertest.SlackServer, version: "2025.4.25", credential: "a good bot token",
		upstream: `200 {"ok":true,"channels":[...]}`, env: map[string]string{"SLACK_BOT_TOKEN": goodSlackToken, "SLACK_TEAM_ID": "T0123ABCDEF"},
		tool: "slack_list_channels", input: `{}`},
	{file: "slack-invalid-auth", pkg: peertest.SlackServer, version: "2025.4.25", credential: "a token Slack never issued",
		upstream: `200 {"ok":false,"error":"invalid_auth"}`, env: map[string]string{"SLACK_BOT_TOKEN": "xoxb-wrong-0000-0000", "SLACK_TEAM_ID": "T0123ABCDEF"},
		tool: "slack_list_channels", input: `{}`, rejected: true},
	{file: "slack-token-revoked", pkg: peertest.SlackServer, version: "2025.4.25", credential: "a revoked bot token",
		upstream: `200 {"ok":false,"error":"token_revoked"}`, env: map[string]string{"SLACK_BOT_TOKEN": "xoxb-revoked-0000-0000", "SLACK_TEAM_ID": "T0123ABCDEF"},
		tool: "slack_list_channels", input: `{}`, rejected: true},
	{file: "brave-web-search-ok", pkg: peertest.BraveServer, version: "0.6.2", credential: "a good subscription token",
		upstream: "200, one web result", env: map[string]string{"BRAVE_API_KEY": goodBraveKey},
		tool: "brave_web_search", input: `{"query":"mcp"}`},
	{file: "brave-subscription-token-invalid", pkg: peertest.BraveServer, version: "0.6.2", credential: "a wrong subscription token",
		upstream: `422 {"type":"ErrorResponse","error":{...,"code":"SUBSCRIPTION_TOKEN_INVALID",...}}`, env: map[string]string{"BRAVE_API_KEY": "BSAwrongKey00000000000"},
		tool: "brave_web_search", input: `{"query":"mcp"}`, rejected: true},
	{file: "postgres-query-ok", pkg: peertest.PostgresServer, version: "0.6.2", credential: "the right password in the database URL",
		upstream: "authentication ok, one row", args: func(pg *peertest.Postgres) []string { return []string{pg.URL(pgUser, pgPassword)} },
		tool: "query", input: `{"sql":"SELECT 1"}`},
	{file: "postgres-password-authentication-failed", pkg: peertest.PostgresServer, version: "0.6.2", credential: "a wrong password in the database URL",
		upstream: `FATAL 28P01 password authentication failed for user "mcp" (checked against a real PostgreSQL 15.14)`,
		args:     func(pg *peertest.Postgres) []string { return []string{pg.URL(pgUser, "a-rotated-password")} },
		tool:     "query", input: `{"sql":"SELECT 1"}`, rejected: true},
}

// TestRecordedResponses runs each pinned server against its stand-in and
// compares its answer with the recorded one (or records it, with -record):
// the classifier's fixtures are what the real servers answer. No call
// makes the stand-ins write.
func TestRecordedResponses(t *testing.T) {
	t.Parallel()
	for _, tc := range responseCases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			node, script := peertest.Server(t, tc.pkg)
			gh, sl, br := peertest.NewGitHub(goodGitHubToken), peertest.NewSlack(goodSlackToken), peertest.NewBrave(goodBraveKey)
			defer gh.Close()
			defer sl.Close()
			defer br.Close()
			gh.Revoke("ghp_revokedToken000000000000000000000")
			sl.Revoke("xoxb-revoked-0000-0000")
			pg, err := peertest.NewPostgres(pgUser, pgPassword)
			if err != nil {
				t.Fatal(err)
			}
			defer pg.Close()
			env := peertest.NodeEnv(gh, sl, br)
			maps.Copy(env, tc.env)
			args := []string{script}
			if tc.args != nil {
				args = append(args, tc.args(pg)...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, call := peertest.Call(ctx, probe.Target{Command: node, Args: args, Env: env}, tc.tool, tc.input)
			if !res.OK || call == nil {
				t.Fatalf("probe failed: %s: %s (stderr %q)", res.Reason, res.Error, res.StderrTail)
			}
			call.Duration = 0
			got := peertest.Response{
				Server: "@modelcontextprotocol/" + tc.pkg + "@" + tc.version, Credential: tc.credential, Upstream: tc.upstream,
				Tool: tc.tool, Input: json.RawMessage(tc.input), Rejected: tc.rejected, Call: call,
			}
			if file, gotJSON, same := golden(t, peertest.ResponsesDir(), tc.file, got); !same {
				t.Errorf("%s answers otherwise than recorded in %s (re-record with -record if the pin changed):\n%s", tc.pkg, file, gotJSON)
			}
			for _, api := range []*peertest.API{gh, sl, br} {
				if n := api.Writes(); n != 0 {
					t.Errorf("%d write requests reached the %s stand-in", n, api.Name)
				}
			}
		})
	}
}

// golden compares got, as indented JSON, with dir/name.json, after writing
// it there under -record. It returns the file, got's JSON and whether the
// two are the same; a file that cannot be read fails the test.
func golden(t *testing.T, dir, name string, got any) (file string, gotJSON []byte, same bool) {
	t.Helper()
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	gotJSON = append(gotJSON, '\n')
	file = filepath.Join(dir, name+".json")
	if *record {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, gotJSON, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (record it with -record)", err)
	}
	return file, gotJSON, bytes.Equal(gotJSON, want)
}

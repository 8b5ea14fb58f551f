package peertest_test

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// standInServer is a pinned server run with node and its entry script,
// and a canary call that shows what its service answered.
type standInServer struct {
	name   string
	pkg    peertest.Package
	script string // entry, under node_modules/NAME
	args   func(cred string) []string
	env    func(cred string) map[string]string
	api    func(good string) *peertest.API
	tool   string
	input  string
	// good, fake: credentials; rejected is what the service's refusal
	// looks like in the call's answer or, for a server that dies at start,
	// in its stderr; down is what a refused connection looks like there.
	good, fake, rejected, down string
}

func standInServers() []standInServer {
	envOf := func(name string) func(string) map[string]string {
		return func(c string) map[string]string { return map[string]string{name: c} }
	}
	return []standInServer{
		{name: "brave", pkg: peertest.BraveSearchMCP, script: "dist/index.js", env: envOf("BRAVE_API_KEY"), api: func(g string) *peertest.API { return peertest.NewBrave(g) },
			tool: "brave_web_search", input: `{"query":"mcp"}`, good: "BSAgood", fake: "BSAfake", rejected: "SUBSCRIPTION_TOKEN_INVALID", down: "fetch failed"},
		{name: "notion", pkg: peertest.NotionMCP, script: "bin/cli.mjs", env: envOf("NOTION_TOKEN"), api: func(g string) *peertest.API { return peertest.NewNotion(g) },
			tool: "API-get-self", input: `{}`, good: "ntn_good", fake: "ntn_fake", rejected: "API token is invalid.", down: "ECONNREFUSED"},
		{name: "sentry", pkg: peertest.SentryMCP, script: "dist/index.js", env: envOf("SENTRY_ACCESS_TOKEN"), api: func(g string) *peertest.API { return peertest.NewSentry(g) },
			tool: "find_organizations", input: `{}`, good: "sntryu_good", fake: "sntryu_fake", rejected: "Authorization Expired", down: "Unable to connect"},
		{name: "context7", pkg: peertest.Context7MCP, script: "dist/index.js", args: func(c string) []string { return []string{"--api-key", c} },
			api:  func(g string) *peertest.API { return peertest.NewContext7(g) },
			tool: "resolve-library-id", input: `{"query":"routing","libraryName":"next.js"}`, good: "ctx7sk-good", fake: "ctx7sk-fake", rejected: "Invalid API key", down: "fetch failed"},
		{name: "stripe", pkg: peertest.StripeMCP, script: "dist/index.js", args: func(c string) []string { return []string{"--api-key=" + c} },
			api:  func(g string) *peertest.API { return peertest.NewStripe(g) },
			tool: "get_stripe_account_info", input: `{}`, good: "rk_test_good1234", fake: "rk_test_fake5678", rejected: "Invalid API Key provided: rk_test_****5678", down: "ECONNREFUSED"},
	}
}

// TestStandIns runs each newly pinned Node server against the stand-in of
// its service, as the acceptance of mcpwatch check does, but by itself:
// with the good credential its canary call gets the service's data; with a
// fake one the service's documented refusal reaches the call's answer (or,
// for Stripe's relay, which never answers initialize then, its stderr);
// with the service down the server sees a refused connection. It shows
// the preload reaches every server, fetch and axios alike.
func TestStandIns(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: node is not installed")
	}
	for _, s := range standInServers() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			_ = peertest.NpxProject(t, s.pkg) // skips (fails under CI) when not installed
			script := filepath.Join(peertest.ResponsesDir(), "..", "node_modules", filepath.FromSlash(s.pkg.Name), s.script)
			for _, mode := range []string{"good", "fake", "down"} {
				api := s.api(s.good)
				if mode == "down" {
					api.Down(true)
				}
				cred := s.good
				if mode == "fake" {
					cred = s.fake
				}
				env := peertest.NodeEnv(api)
				env["HOME"] = t.TempDir()
				if s.env != nil {
					maps.Copy(env, s.env(cred))
				}
				args := []string{script}
				if s.args != nil {
					args = append(args, s.args(cred)...)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				if s.name == "stripe" && mode != "good" {
					// The relay never answers initialize: a short deadline, and its stderr.
					cancel()
					ctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
				}
				res, call := peertest.Call(ctx, probe.Target{Command: node, Args: args, Env: env}, s.tool, s.input)
				cancel()
				answer := ""
				if call != nil {
					raw, _ := json.Marshal(call)
					answer = string(raw)
				}
				seen := answer + res.StderrTail
				t.Logf("%s: probe ok=%v reason=%s; call %s; stderr %.300q", mode, res.OK, res.Reason, answer, res.StderrTail)
				switch mode {
				case "good":
					if !res.OK || call == nil || call.IsError || strings.Contains(seen, s.rejected) {
						t.Errorf("good credential: the call did not get the service's data")
					}
					if api.Requests() == 0 {
						t.Errorf("good credential: %s saw no request", api.Name)
					}
				case "fake":
					if !strings.Contains(seen, s.rejected) {
						t.Errorf("fake credential: %q is not in what the server answered or logged", s.rejected)
					}
				case "down":
					if !strings.Contains(seen, s.down) || strings.Contains(seen, s.rejected) {
						t.Errorf("service down: want %q, and no rejection, in what the server answered or logged", s.down)
					}
					if api.Requests() != 0 {
						t.Errorf("service down: %s still answered %d requests", api.Name, api.Requests())
					}
				}
				if api.Writes() != 0 {
					t.Errorf("%s saw %d writes", api.Name, api.Writes())
				}
				api.Close()
			}
		})
	}
}

// TestSlackMCPThroughProxy runs the Go binary of slack-mcp-server through
// the proxy: with the good token it lists its tools; with a fake one it
// exits at start saying invalid_auth; with Slack unreachable (the proxy's
// address refusing) it exits saying the connection was refused.
func TestSlackMCPThroughProxy(t *testing.T) {
	t.Parallel()
	_ = peertest.NpxProject(t, peertest.SlackMCP)
	bin, err := peertest.SlackMCPBinary()
	if err != nil {
		t.Fatal(err)
	}
	const good = "xoxp-good-0000"
	sl := peertest.NewSlack(good)
	defer sl.Close()
	proxy, err := peertest.NewProxy(sl)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	for _, tc := range []struct {
		mode, token, proxy, want string
		ok                       bool
	}{
		{"good", good, proxy.URL(), "", true},
		{"fake", "xoxp-fake-0000", proxy.URL(), "invalid_auth", false},
		{"down", good, peertest.RefusedURL(), "connection refused", false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res := probe.Run(ctx, probe.Target{Command: bin, Args: []string{"--transport", "stdio"}, Env: map[string]string{
			"SLACK_MCP_XOXP_TOKEN": tc.token, "SLACK_MCP_PROXY": tc.proxy, "SLACK_MCP_SERVER_CA": proxy.CAFile(), "HOME": t.TempDir(),
		}}, probe.Options{})
		cancel()
		t.Logf("%s: ok=%v reason=%s tools=%d stderr %.400q", tc.mode, res.OK, res.Reason, len(res.Tools), res.StderrTail)
		if res.OK != tc.ok || !strings.Contains(res.StderrTail, tc.want) {
			t.Errorf("%s: probe ok=%v, want %v with %q in its stderr", tc.mode, res.OK, tc.ok, tc.want)
		}
	}
	if sl.Writes() != 0 {
		t.Errorf("%d writes reached Slack", sl.Writes())
	}
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A JWT in an env value or a header has its exp exported (read without
// verifying); an opaque token has none; the JWT never shows in the result.
func TestProbeReadsJWTExpiry(t *testing.T) {
	// {"alg":"none"} . {"exp":2000000000} . no signature
	const jwt = "eyJhbGciOiJub25lIn0.eyJleHAiOjIwMDAwMDAwMDB9."
	lookup := func(name string) (string, bool) {
		switch name {
		case "JWT":
			return jwt, true
		case "OPAQUE":
			return "opaque-token-value-123", true
		}
		return "", false
	}
	s := normalized(config.Server{
		Name: "echo", Command: "/bin/sh", Transport: probe.TransportStdio,
		Args: []string{"-c", `echo "token $API_TOKEN" >&2; exit 3`},
		Env:  map[string]string{"API_TOKEN": "${JWT}", "OTHER": "${OPAQUE}"},
	})
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup, Timeout: 5 * time.Second})
	c := obs.Result.Credentials
	if c == nil || len(c.Expiries) != 1 || c.Expiries[0].Credential != "env:API_TOKEN" || c.Expiries[0].Expiry.Unix() != 2000000000 || c.OAuth {
		t.Fatalf("credentials = %+v, want env:API_TOKEN expiring at 2000000000", c)
	}
	if strings.Contains(obs.Result.StderrTail, jwt) {
		t.Errorf("the JWT shows in the stderr tail: %q", obs.Result.StderrTail)
	}
}

// A stdio server that says why it dies on stderr is read by the credential
// rule: Slack's Go server exits on invalid_auth, Stripe's relay logs its
// 401 and never answers initialize; a network failure in the same stderr
// wins (Slack's server says "Authentication failed" when Slack is merely
// unreachable).
func TestProbeReadsStderrOfADyingServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		reason       probe.Reason
		quote        string
	}{
		{"exits on invalid_auth", `echo "starting slack-mcp-server" >&2; echo "FATAL Failed to authenticate: invalid_auth" >&2; exit 1`,
			probe.ReasonCredentialRejected, "invalid_auth"},
		{"never answers, having logged its 401", `echo '{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: rk_test_****"}}' >&2; exec cat >/dev/null`,
			probe.ReasonCredentialRejected, "Invalid API Key provided"},
		{"the network wins", `echo "Authentication failed - check your Slack tokens" >&2; echo 'Post "https://slack.com/api/auth.test": dial tcp: lookup slack.com: no such host' >&2; exit 1`,
			probe.ReasonUpstreamUnreachable, "no such host"},
		{"anything else stays exited", `echo "panic: runtime error: index out of range" >&2; exit 2`, probe.ReasonExited, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := normalized(config.Server{Name: "slack", Command: "/bin/sh", Transport: probe.TransportStdio,
				Args: []string{"-c", tc.script}, Env: map[string]string{"SLACK_BOT_TOKEN": "xoxb-fake-0000"}})
			obs := Probe(t.Context(), NewPool(1, 1), s, Request{Timeout: 5 * time.Second})
			res := obs.Result
			if res.Reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", res.Reason, res.Error, tc.reason)
			}
			switch tc.reason {
			case probe.ReasonCredentialRejected:
				r := res.Credentials.Rejected
				if r == nil || r.Credential != "env:SLACK_BOT_TOKEN" || !strings.Contains(r.Quote, tc.quote) {
					t.Errorf("rejection %+v, want env:SLACK_BOT_TOKEN quoting %q", r, tc.quote)
				}
			case probe.ReasonUpstreamUnreachable:
				if res.Upstream == nil || !strings.Contains(res.Upstream.Quote, tc.quote) || res.Credentials != nil && res.Credentials.Rejected != nil {
					t.Errorf("upstream %+v, credentials %+v: want the network's words and no rejection", res.Upstream, res.Credentials)
				}
			}
		})
	}
}

// A stdio server that lists its tools and serves on is read by the same
// rule, more strictly: a rejection it logged at start fails the probe as
// credential_rejected, naming the credential it was given; a network
// failure in the same tail wins; and nothing else is called a rejection:
// a server given no credential, npm's own lines, an absent credential, a
// rejection of a credential it was not given, a network failure alone.
func TestProbeReadsStderrOfAServingServer(t *testing.T) {
	t.Parallel()
	const figma401 = `[figma] API error (401): {"error": "Invalid token", "error_tag": "AUTH_INVALID_TOKEN", "http_code": 401}` + "\n"
	tests := []struct {
		name, stderr string
		given        bool
		reason       probe.Reason // "" stays OK
		quote        string
	}{
		{"a 401 logged at start", "Starting Figma MCP server...\n" + figma401, true, probe.ReasonCredentialRejected, "Invalid token"},
		{"a revoked token", "fatal-ish: token has been revoked; re-authorize the app\n", true, probe.ReasonCredentialRejected, "revoked"},
		{"the network wins", figma401 + "Error: request to https://api.figma.com/v1/me failed: getaddrinfo ENOTFOUND api.figma.com\n", true, probe.ReasonUpstreamUnreachable, "ENOTFOUND"},
		{"a network failure alone", "telemetry: TypeError: fetch failed\n", true, "", ""},
		{"given no credential", figma401, false, "", ""},
		{"npm's own lines", "npm warn config production Use `--omit=dev` instead.\nnpm error code E401\nnpm error Unable to authenticate, your authentication token seems to be invalid.\n", true, "", ""},
		{"an absent credential", "Warning: API key missing for the summarizer; summaries are off\nAuthentication required for private files\n", true, "", ""},
		{"another credential", "OPENAI_API_KEY is invalid: the summarizer is off\n", true, "", ""},
		{"nothing of the kind", "Server running on stdio\n", true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, args, env := probetest.Command(probetest.Config{StartStderr: tc.stderr})
			if tc.given {
				env["FIGMA_API_KEY"] = "figd_fake-0000"
			}
			s := normalized(config.Server{Name: "figma", Command: path, Args: args, Env: env, Transport: probe.TransportStdio})
			res := Probe(t.Context(), NewPool(1, 1), s, Request{Timeout: time.Minute}).Result
			if tc.reason == "" {
				if !res.OK {
					t.Fatalf("failed (%s: %s), want OK", res.Reason, res.Error)
				}
				return
			}
			if res.OK || res.Reason != tc.reason || len(res.Tools) != 2 {
				t.Fatalf("ok %v, reason %q (%s), %d tools; want %q with its 2 tools kept", res.OK, res.Reason, res.Error, len(res.Tools), tc.reason)
			}
			switch tc.reason {
			case probe.ReasonCredentialRejected:
				if r := res.Credentials.Rejected; r == nil || r.Credential != "env:FIGMA_API_KEY" || !strings.Contains(r.Quote, tc.quote) {
					t.Errorf("rejection %+v, want env:FIGMA_API_KEY quoting %q", r, tc.quote)
				}
			case probe.ReasonUpstreamUnreachable:
				if res.Upstream == nil || !strings.Contains(res.Upstream.Quote, tc.quote) || res.Credentials != nil && res.Credentials.Rejected != nil {
					t.Errorf("upstream %+v, credentials %+v: want the network's words and no rejection", res.Upstream, res.Credentials)
				}
			}
			if !strings.Contains(res.Error, "the server listed its 2 tools") {
				t.Errorf("error %q does not say the server listed its tools", res.Error)
			}
		})
	}
}

// The hint that npx may still be installing is given only when an install
// is plausible: the package is not in npm's npx cache, or npm said so.
func TestInstallPlausible(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	dir := filepath.Join(cache, "_npx", "0123abcd", "node_modules", "@stripe", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@stripe/mcp"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cached := config.Server{Command: "npx", Args: []string{"-y", "@stripe/mcp@0.3.3", "--tools=all"}}
	other := config.Server{Command: "npx", Args: []string{"-y", "@notionhq/notion-mcp-server"}}
	if installPlausible(cached.Install(), "", cache) {
		t.Error("a package in the npx cache: install called plausible")
	}
	if !installPlausible(cached.Install(), "npm warn exec The following package was not found and will be installed: @stripe/mcp@0.3.4\n", cache) {
		t.Error("npm said it installs: install not called plausible")
	}
	if !installPlausible(other.Install(), "", cache) {
		t.Error("a package not in the cache: install not called plausible")
	}
	if !installPlausible(config.Server{Command: "uvx", Args: []string{"mcp-server-git"}}.Install(), "", cache) {
		t.Error("uvx: install not called plausible")
	}
	// npx runs a package of the project's node_modules, or of a folder
	// above where the server starts, without installing it.
	project := t.TempDir()
	local := filepath.Join(project, "node_modules", "@notionhq", "notion-mcp-server")
	if err := os.MkdirAll(local, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(local, "package.json"), []byte(`{"name":"@notionhq/notion-mcp-server"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	below := filepath.Join(project, "agents", "ops")
	if err := os.MkdirAll(below, 0o700); err != nil {
		t.Fatal(err)
	}
	other.Dir = below
	if installPlausible(other.Install(), "", cache) {
		t.Error("a package in the node_modules above where the server starts: install called plausible")
	}
}

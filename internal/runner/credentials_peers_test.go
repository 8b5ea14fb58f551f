package runner

import (
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The stderr of a server that serves is read on the pinned npm servers as
// they run against stand-ins of their services: with the good credential
// nothing they log is a rejection or an outage; with a fake one nothing
// is an outage; with the service down nothing is a rejection. None of them
// logs a refusal at start, so each keeps the verdict its canary calls give
// (TestProbeReadsStderrOfAServingServer has one that does).
func TestServingStderrOfPinnedServers(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: node is not installed")
	}
	servers := []struct {
		name     string
		pkg      peertest.Package
		script   string
		variable string
		api      func(good string) *peertest.API
	}{
		{"brave", peertest.BraveSearchMCP, "dist/index.js", "BRAVE_API_KEY", func(g string) *peertest.API { return peertest.NewBrave(g) }},
		{"notion", peertest.NotionMCP, "bin/cli.mjs", "NOTION_TOKEN", func(g string) *peertest.API { return peertest.NewNotion(g) }},
		{"sentry", peertest.SentryMCP, "dist/index.js", "SENTRY_ACCESS_TOKEN", func(g string) *peertest.API { return peertest.NewSentry(g) }},
		{"server-github", peertest.GitHubRef, "dist/index.js", "GITHUB_PERSONAL_ACCESS_TOKEN", func(g string) *peertest.API { return peertest.NewGitHub(g) }},
		{"server-brave-search", peertest.BraveRef, "dist/index.js", "BRAVE_API_KEY", func(g string) *peertest.API { return peertest.NewBrave(g) }},
	}
	const good, fake = "good-credential-0000", "fake-credential-0000"
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			_ = peertest.NpxProject(t, s.pkg) // skips (fails under CI) when not installed
			script := filepath.Join(peertest.ResponsesDir(), "..", "node_modules", filepath.FromSlash(s.pkg.Name), s.script)
			for _, mode := range []string{"good", "fake", "down"} {
				api := s.api(good)
				api.Down(mode == "down")
				env := peertest.NodeEnv(api)
				env["HOME"] = t.TempDir()
				cred := map[string]string{"good": good, "fake": fake, "down": good}[mode]
				maps.Copy(env, map[string]string{s.variable: cred})
				srv := normalized(config.Server{Name: s.name, Command: node, Args: []string{script}, Env: env, Transport: probe.TransportStdio})
				res := Probe(t.Context(), NewPool(1, 1), srv, Request{Timeout: 90 * time.Second}).Result
				api.Close()
				t.Logf("%s: ok=%v reason=%s; stderr %.300q", mode, res.OK, res.Reason, res.StderrTail)
				switch {
				case mode == "good" && !res.OK:
					t.Errorf("good credential: %s (%s)", res.Reason, res.Error)
				case mode == "fake" && res.Reason == probe.ReasonUpstreamUnreachable:
					t.Errorf("fake credential read as an outage: %s", res.Error)
				case mode == "down" && res.Reason == probe.ReasonCredentialRejected:
					t.Errorf("service down read as a rejection: %s", res.Error)
				}
				if strings.Contains(res.Error+res.StderrTail, cred) {
					t.Errorf("the credential's value in the result")
				}
			}
		})
	}
}

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// slackStartToken is the user token slack-mcp-server starts with; the test
// revokes it at the Slack stand-in.
const slackStartToken = "xoxp-e2e-start-0000-0000"

// TestAlertingRevokedAtStart runs the page path for a stdio server that
// dies at start on a revoked credential, with nothing to call: the pinned
// slack-mcp-server (a Go binary) checks its token with Slack's auth.test
// before it reads a byte of MCP, and exits with Slack's error on its
// stderr when Slack refuses it ("token_revoked" for a revoked token). mcpwatch serve probes it against a Slack
// stand-in it reaches through a loopback HTTPS proxy (its own documented
// SLACK_MCP_PROXY and SLACK_MCP_SERVER_CA); Prometheus evaluates the
// project's rules, Alertmanager routes to a webhook here. A healthy stack
// sends nothing; the token revoked at the stand-in pages
// McpCredentialRejected naming SLACK_MCP_XOXP_TOKEN (not a server that
// merely exited), and the token accepted again resolves it.
func TestAlertingRevokedAtStart(t *testing.T) {
	need(t, "prometheus", "prometheus-alertmanager")
	bin, err := peertest.SlackMCPBinary()
	if err != nil {
		t.Fatalf("%v", err)
	}
	testStart := time.Now()
	rx := newReceiver(t) // before the harness: its cleanup runs after the processes stopped
	h := newHarness(t)
	sl := peertest.NewSlack(slackStartToken)
	t.Cleanup(sl.Close)
	proxy, err := peertest.NewProxy(sl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)

	var (
		mcpwatchAddr = freeAddr(t)
		promAddr     = freeAddr(t)
		amAddr       = freeAddr(t)
		prom         = promAPI{base: "http://" + promAddr}
	)
	writeFile(t, filepath.Join(h.dir, "secrets", "slack-token"), slackStartToken+"\n")
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), lockJSON("slack", []string{"channels_list", "conversations_history"}))
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), fmt.Sprintf(`defaults:
  schedule: %q
  timeout: 20s
lock: mcp-tools.lock.json
servers:
  slack:
    command: %q
    args: [--transport, stdio]
    env:
      SLACK_MCP_XOXP_TOKEN: "${file:secrets/slack-token}"
      SLACK_MCP_PROXY: %q
      SLACK_MCP_SERVER_CA: %q
      SLACK_MCP_USERS_CACHE: %q
      SLACK_MCP_CHANNELS_CACHE: %q
`, fmt.Sprintf("@every %s", probeInterval), bin, proxy.URL(), proxy.CAFile(),
		filepath.Join(h.dir, "cache", "users.json"), filepath.Join(h.dir, "cache", "channels.json")))
	if err := os.MkdirAll(filepath.Join(h.dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	mcpwatch, shortenedRules := h.startPagePath(rx, prom, mcpwatchAddr, promAddr, amAddr)
	sel := `{job="mcpwatch",server="slack"}`
	h.waitFor("prometheus to see slack-mcp-server probed with both locked tools", 60*time.Second, func() error {
		for q, want := range map[string]float64{
			"mcpwatch_probe_success" + sel:      1,
			"mcpwatch_tools_missing" + sel:      0,
			"mcpwatch_credential_present" + sel: 1,
		} {
			if err := prom.queryEquals(q, want); err != nil {
				return err
			}
		}
		return nil
	})
	loadRules(t, h, prom, shortenedRules)
	expectNoNotification(t, h, rx, quietWindow)

	// The token revoked: the server exits at start, its stderr saying so.
	revoked := time.Now()
	sl.Revoke(slackStartToken)
	page := pageFor(t, h, rx, revoked, "McpCredentialRejected", "slack", latencyBound+30*time.Second)
	detection := page.Received.Sub(revoked)
	t.Logf("page: %s", page)
	for _, a := range page.alertsNamed("McpCredentialRejected", "slack") {
		if a.Labels["severity"] != "critical" || a.Labels["credential"] != "env:SLACK_MCP_XOXP_TOKEN" ||
			!strings.Contains(a.Annotations["summary"]+a.Annotations["description"], "token_revoked") {
			t.Errorf("McpCredentialRejected for slack: labels %v, annotations %v (want env:SLACK_MCP_XOXP_TOKEN named, the server's token_revoked quoted)", a.Labels, a.Annotations)
		}
	}
	for _, a := range page.Alerts {
		if strings.Contains(fmt.Sprint(a.Annotations), slackStartToken) {
			t.Errorf("the token's value in a page: %v", a.Annotations)
		}
	}

	// Accepted again (as when the revocation is undone): resolved.
	accepted := time.Now()
	sl.Accept(slackStartToken)
	resolved := resolutionOf(t, h, rx, accepted, "McpCredentialRejected", "slack", latencyBound+30*time.Second)
	resolution := resolved.Received.Sub(accepted)
	noOtherPage(t, rx, revoked, "slack", "McpCredentialRejected")
	if n := sl.Writes(); n != 0 {
		t.Errorf("%d write requests reached the Slack stand-in", n)
	}
	t.Logf("LATENCY slack-mcp-server (token revoked at the stand-in -> firing McpCredentialRejected received): %s", detection.Round(time.Millisecond))
	t.Logf("LATENCY slack-mcp-server recovery (token accepted again -> resolved McpCredentialRejected received): %s", resolution.Round(time.Millisecond))
	if err := mcpwatch.stop(); err != nil {
		t.Errorf("mcpwatch serve on SIGTERM: %v; log %s", err, mcpwatch.logPath)
	}
	t.Logf("test took %s", time.Since(testStart).Round(time.Millisecond))
}

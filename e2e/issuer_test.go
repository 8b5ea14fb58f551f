//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// The credentials of the issuer test: a GitHub token, then the renewal
// its issuer says expires in 3 days; a GitLab token revoked during the
// test.
const (
	issuerGitHubToken = "ghp_e2eIssuerToken000000000000000000000a"
	// issuerGitHubRenewed is the token put in its place, which GitHub says
	// expires in 3 days.
	issuerGitHubRenewed = "ghp_e2eIssuerToken000000000000000000000b"
	issuerGitLabToken   = "glpat-e2eIssuerToken0000000000"
	// issuerInterval is the test's issuer_check_interval, the least
	// mcpwatch takes.
	issuerInterval = time.Minute
)

// TestAlertingIssuer runs the page path for credentials checked where they
// were issued, on two servers that list every tool whatever their
// credential and are never called (the example report server, given a
// GitHub and a GitLab token it does not use): mcpwatch serve asks GitHub's
// and GitLab's stand-ins about the tokens, through HTTPS_PROXY and
// SSL_CERT_FILE, as their documentation shows. A renewed GitHub token put
// in place, which its issuer says expires in 3 days, fires
// McpCredentialExpiringSoon at its first check, naming the credential and
// the date; the GitLab token revoked at the issuer fires
// McpCredentialRejected within one check interval, quoting GitLab, and
// its acceptance resolves it. No request but the identity request reaches
// either service, and no tool is called.
func TestAlertingIssuer(t *testing.T) {
	need(t, "prometheus", "prometheus-alertmanager")
	rx := newReceiver(t) // before the harness: its cleanup runs after the processes stopped
	h := newHarness(t)
	gh, err := peertest.NewIssuer("github", issuerGitHubToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gl, err := peertest.NewIssuer("gitlab", issuerGitLabToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gl.Close)
	expiry := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	gh.ExpireAt(issuerGitHubRenewed, expiry)
	proxy, err := peertest.NewProxy(gh, gl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	h.mcpwatchEnv = []string{"HTTPS_PROXY=" + proxy.URL(), "SSL_CERT_FILE=" + proxy.CAFile()}

	var (
		mcpwatchAddr = freeAddr(t)
		promAddr     = freeAddr(t)
		amAddr       = freeAddr(t)
		prom         = promAPI{base: "http://" + promAddr}
	)
	writeFile(t, filepath.Join(h.dir, "secrets", "report-token"), token+"\n")
	writeFile(t, filepath.Join(h.dir, "secrets", "report-scope"), "full\n")
	writeFile(t, filepath.Join(h.dir, "secrets", "github-token"), issuerGitHubToken+"\n")
	writeFile(t, filepath.Join(h.dir, "secrets", "gitlab-token"), issuerGitLabToken+"\n")
	lock, err := json.Marshal(map[string][]string{"github-tools": lockedTools, "gitlab-tools": lockedTools})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), string(lock)+"\n")
	server := func(name, variable, file string) string {
		return fmt.Sprintf(`  %s:
    command: %q
    env:
      REPORT_API_TOKEN: "${file:secrets/report-token}"
      REPORT_SCOPE: "${file:secrets/report-scope}"
      %s: "${file:%s}"
`, name, suite.reportserver, variable, file)
	}
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), fmt.Sprintf(`defaults:
  schedule: %q
  timeout: 10s
  issuer_check_interval: %s
lock: mcp-tools.lock.json
servers:
%s%s`, fmt.Sprintf("@every %s", probeInterval), issuerInterval,
		server("github-tools", "GITHUB_PERSONAL_ACCESS_TOKEN", "secrets/github-token"),
		server("gitlab-tools", "GITLAB_PERSONAL_ACCESS_TOKEN", "secrets/gitlab-token")))

	_, shortenedRules := h.startPagePath(rx, prom, mcpwatchAddr, promAddr, amAddr)
	h.waitFor("prometheus to see both tokens accepted at their issuers", 60*time.Second, func() error {
		for q, want := range map[string]float64{
			`mcpwatch_credential_issuer_accepted{server="github-tools",service="github"}`: 1,
			`mcpwatch_credential_issuer_accepted{server="gitlab-tools",service="gitlab"}`: 1,
			`sum(mcpwatch_tools_missing)`: 0,
		} {
			if err := prom.queryEquals(q, want); err != nil {
				return err
			}
		}
		return nil
	})
	loadRules(t, h, prom, shortenedRules)
	// A reload of Prometheus finds its Alertmanager afresh: an alert that
	// fired before then would wait a minute to be sent again.
	waitAlertmanagerFound(h, prom, "prometheus to find the alertmanager again after the rules")
	expectNoNotification(t, h, rx, quietWindow)

	// A renewed GitHub token put in place, which GitHub says expires in 3
	// days: checked at the next probe, a new credential; the week's warning.
	renewed := time.Now()
	writeFile(t, filepath.Join(h.dir, "secrets", "github-token"), issuerGitHubRenewed+"\n")
	t.Cleanup(func() {
		if t.Failed() {
			all, err := rx.notifications()
			t.Logf("notifications received (%v):", err)
			for _, n := range all {
				t.Logf("  %s", n)
			}
		}
	})
	page := pageFor(t, h, rx, renewed, "McpCredentialExpiringSoon", "github-tools", latencyBound)
	date := expiry.Format("2006-01-02")
	for _, a := range page.alertsNamed("McpCredentialExpiringSoon", "github-tools") {
		text := a.Annotations["summary"] + " " + a.Annotations["description"]
		if a.Labels["credential"] != "env:GITHUB_PERSONAL_ACCESS_TOKEN" || a.Labels["severity"] != "warning" || !strings.Contains(text, date) {
			t.Errorf("McpCredentialExpiringSoon: labels %v, annotations %v; want env:GITHUB_PERSONAL_ACCESS_TOKEN named, warning, and the date %s", a.Labels, a.Annotations, date)
		}
	}
	t.Logf("page: %s", page)

	// The GitLab token revoked at GitLab: rejected at its next check.
	revoked := time.Now()
	gl.Revoke(issuerGitLabToken)
	page = pageFor(t, h, rx, revoked, "McpCredentialRejected", "gitlab-tools", issuerInterval+latencyBound)
	detection := page.Received.Sub(revoked)
	for _, a := range page.alertsNamed("McpCredentialRejected", "gitlab-tools") {
		if a.Labels["credential"] != "env:GITLAB_PERSONAL_ACCESS_TOKEN" || !strings.Contains(a.Annotations["summary"], "Token was revoked") {
			t.Errorf("McpCredentialRejected: labels %v, annotations %v; want env:GITLAB_PERSONAL_ACCESS_TOKEN named, GitLab quoted", a.Labels, a.Annotations)
		}
	}
	accepted := time.Now()
	gl.Accept(issuerGitLabToken)
	resolved := resolutionOf(t, h, rx, accepted, "McpCredentialRejected", "gitlab-tools", issuerInterval+latencyBound)
	for _, api := range []*peertest.API{gh, gl} {
		if n := api.Writes(); n != 0 {
			t.Errorf("%s saw %d requests that were not its identity request", api.Name, n)
		}
	}
	all, err := rx.notifications()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all {
		if text := fmt.Sprint(n); strings.Contains(text, issuerGitHubToken) || strings.Contains(text, issuerGitHubRenewed) || strings.Contains(text, issuerGitLabToken) {
			t.Errorf("a token's value in a page: %s", n)
		}
	}
	t.Logf("LATENCY issuer check (GitLab token revoked -> firing McpCredentialRejected received): %s (interval %s)", detection.Round(time.Millisecond), issuerInterval)
	t.Logf("LATENCY issuer check recovery (accepted again -> resolved): %s", resolved.Received.Sub(accepted).Round(time.Millisecond))
}

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

const (
	// probeInterval is the report server's schedule in the test config.
	probeInterval = 2 * time.Second
	// callInterval is its call_schedule: the canary calls of both tools.
	callInterval = 2 * time.Second
	// gitHubCallInterval is server-github's call_schedule: each call
	// firing starts a Node process.
	gitHubCallInterval = 5 * time.Second
	// latencyBound is the most a page or its resolution may take after the
	// credential changes: one probe interval, plus 15 s for the scrape, the
	// rule evaluation, Alertmanager and a busy machine.
	latencyBound = probeInterval + 15*time.Second
	// quietWindow is how long a healthy stack must send no notification.
	quietWindow = 5 * time.Second

	watchedServer = "report"
	token         = "e2e-token"
	// The GitHub stand-in's tokens: the first is revoked during the test,
	// the second is its renewal.
	gitHubToken        = "ghp_e2eFirstToken0000000000000000000000"
	gitHubRenewedToken = "ghp_e2eRenewedToken00000000000000000000"
)

var lockedTools = []string{"fetch_daily_report", "list_report_dates"}

// TestAlertingTokenRemovedAndRestored runs the page path with the real
// programs: mcpwatch serve probes the example report server over stdio with
// its token read from a file, and the pinned npm server-github against a
// stand-in of GitHub's API; Prometheus scrapes it every second and
// evaluates the project's rules (their `for:` set to 0s by
// deploy/prometheus/shorten-for.sh), Alertmanager routes to a webhook here.
// A healthy stack sends nothing. Then, one at a time, each restored before
// the next: the token file emptied pages McpCredentialMissing naming the
// credential; a scope narrowed pages McpToolsMissing naming the tool; the
// report server's own API key revoked pages McpCredentialRejected, quoting
// the server (McpToolCallFailing stays quiet); GitHub's token revoked pages
// McpCredentialRejected for server-github, quoting "Bad credentials", and
// its renewal resolves it. It reports how long each took.
func TestAlertingTokenRemovedAndRestored(t *testing.T) {
	need(t, "prometheus", "prometheus-alertmanager")
	node, script := needPeer(t, peertest.GitHubServer)
	testStart := time.Now()
	rx := newReceiver(t) // before the harness: its cleanup runs after the processes stopped
	h := newHarness(t)
	gh := peertest.NewGitHub(gitHubToken)
	t.Cleanup(gh.Close)

	var (
		mcpwatchAddr = freeAddr(t)
		promAddr     = freeAddr(t)
		amAddr       = freeAddr(t)
		tokenFile    = filepath.Join(h.dir, "secrets", "report-token")
		scopeFile    = filepath.Join(h.dir, "secrets", "report-scope")
		apiKeyFile   = filepath.Join(h.dir, "secrets", "report-api-key")
		gitHubFile   = filepath.Join(h.dir, "secrets", "github-token")
		prom         = promAPI{base: "http://" + promAddr}
	)
	writeFile(t, tokenFile, token+"\n")
	writeFile(t, scopeFile, "full\n")
	writeFile(t, apiKeyFile, "e2e-api-key\n")
	writeFile(t, gitHubFile, gitHubToken+"\n")
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), lockJSON(watchedServer, lockedTools))
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), mcpwatchConfig(suite.reportserver, "secrets/report-token", apiKeyFile,
		githubServer(node, script, "secrets/github-token", peertest.NodeEnv(gh))))
	// All healthy, and the numbers flowing: mcpwatch has probed, Prometheus
	// scrapes it and knows the Alertmanager.
	mcpwatch, shortenedRules := h.startPagePath(rx, prom, mcpwatchAddr, promAddr, amAddr)
	sel := fmt.Sprintf(`{job="mcpwatch",server=%q}`, watchedServer)
	h.waitFor("prometheus to scrape mcpwatch and see both locked tools, and github's call pass", 60*time.Second, func() error {
		for q, want := range map[string]float64{
			`up{job="mcpwatch"}`:                    1,
			"mcpwatch_probe_success" + sel:          1,
			"mcpwatch_tools_expected" + sel:         2,
			"mcpwatch_tools_missing" + sel:          0,
			"sum(mcpwatch_tool_missing" + sel + ")": 0,
			"sum(mcpwatch_call_success" + sel + ")": 2,
			// Every credential the server is given is there: its token
			// (env) and the file its key is read from (--api-key-file).
			"min(mcpwatch_credential_present" + sel + ")":                                      1,
			`mcpwatch_call_success{job="mcpwatch",server="github",tool="search_repositories"}`: 1,
		} {
			if err := prom.queryEquals(q, want); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("stack healthy %s after start", time.Since(testStart).Round(time.Millisecond))

	// The rules go in only now. With `for:` shortened to 0s, McpwatchAbsent
	// would fire in the seconds before Prometheus's first scrape (in
	// production its 5m `for:` covers that); loading the rules once the
	// target is up keeps "a healthy stack sends nothing" a strict check.
	loadRules(t, h, prom, shortenedRules)

	expectNoNotification(t, h, rx, quietWindow)
	if alerts, err := prom.alerts(); err != nil || len(alerts) > 0 {
		t.Fatalf("a healthy stack has alerts in Prometheus: %s %v", describeAlerts(alerts), err)
	}
	t.Logf("no notification and no pending alert during %s of a healthy stack", quietWindow)

	// The credential is gone: McpCredentialMissing, naming it.
	emptied := time.Now()
	writeFile(t, tokenFile, "")
	missing := pageFor(t, h, rx, emptied, "McpCredentialMissing", watchedServer, latencyBound+30*time.Second)
	detection := missing.Received.Sub(emptied)
	for _, a := range missing.alertsNamed("McpCredentialMissing", watchedServer) {
		if a.Labels["severity"] != "critical" || a.Labels["credential"] != "env:REPORT_API_TOKEN" || a.Labels["instance"] != "" ||
			!strings.Contains(a.Annotations["summary"], "credential env:REPORT_API_TOKEN") {
			t.Errorf("McpCredentialMissing: labels %v, summary %q (want critical, naming env:REPORT_API_TOKEN, no instance)", a.Labels, a.Annotations["summary"])
		}
	}
	restored := time.Now()
	writeFile(t, tokenFile, token+"\n")
	resolved := resolutionOf(t, h, rx, restored, "McpCredentialMissing", watchedServer, latencyBound+30*time.Second)
	resolution := resolved.Received.Sub(restored)
	noOtherPage(t, rx, emptied, watchedServer, "McpCredentialMissing")
	waitAllQuiet(t, h, rx, prom, emptied)

	// The scope narrowed: the server lists one tool of two.
	narrowed := time.Now()
	writeFile(t, scopeFile, "read\n")
	page := pageFor(t, h, rx, narrowed, "McpToolsMissing", watchedServer, latencyBound+30*time.Second)
	t.Logf("page: %s", page)
	checkPage(t, page)
	if tools := toolsIn(page.alertsNamed("McpToolsMissing", watchedServer)); !slices.Equal(tools, []string{"fetch_daily_report"}) {
		t.Errorf("McpToolsMissing names %v, want fetch_daily_report alone", tools)
	}
	writeFile(t, scopeFile, "full\n")
	resolutionOf(t, h, rx, time.Now(), "McpToolsMissing", watchedServer, latencyBound+30*time.Second)
	waitAllQuiet(t, h, rx, prom, narrowed)

	callDetection, callResolution := revokeAPIKey(t, h, rx, prom, apiKeyFile)
	waitAllQuiet(t, h, rx, prom, emptied)
	ghDetection, ghResolution := revokeGitHubToken(t, h, rx, gh, gitHubFile)

	got, _ := rx.notifications()
	for _, n := range got {
		t.Logf("notification: %s", n)
	}
	t.Logf("LATENCY detection (token file emptied -> firing McpCredentialMissing received): %s", detection.Round(time.Millisecond))
	t.Logf("LATENCY resolution (token written back -> resolved McpCredentialMissing received): %s", resolution.Round(time.Millisecond))
	t.Logf("LATENCY call failure (server's API key revoked -> firing McpCredentialRejected received): %s", callDetection.Round(time.Millisecond))
	t.Logf("LATENCY call recovery (API key written back -> resolved McpCredentialRejected received): %s", callResolution.Round(time.Millisecond))
	t.Logf("LATENCY github (token revoked at the stand-in -> firing McpCredentialRejected received): %s", ghDetection.Round(time.Millisecond))
	t.Logf("LATENCY github recovery (renewed token written -> resolved McpCredentialRejected received): %s", ghResolution.Round(time.Millisecond))
	t.Logf("bound for each: probe interval %s + 15s = %s", probeInterval, latencyBound)
	if detection > latencyBound {
		t.Errorf("detection took %s, more than %s", detection, latencyBound)
	}
	if resolution > latencyBound {
		t.Errorf("resolution took %s, more than %s", resolution, latencyBound)
	}
	if callBound := callInterval + 15*time.Second; callDetection > callBound || callResolution > callBound {
		t.Errorf("call failure paged after %s and resolved after %s, more than %s", callDetection, callResolution, callBound)
	}
	if ghBound := gitHubCallInterval + 20*time.Second; ghDetection > ghBound || ghResolution > ghBound {
		t.Errorf("github's rejected token paged after %s and resolved after %s, more than %s", ghDetection, ghResolution, ghBound)
	}
	if n := gh.Writes(); n != 0 {
		t.Errorf("%d write requests reached the GitHub stand-in: a canary must never write", n)
	}

	// mcpwatch stops cleanly on SIGTERM (the harness would kill it otherwise).
	stopStart := time.Now()
	if err := mcpwatch.stop(); err != nil {
		t.Errorf("mcpwatch serve on SIGTERM: %v (want exit 0 within %s); log %s", err, stopGrace, mcpwatch.logPath)
	}
	t.Logf("mcpwatch stopped in %s; test took %s", time.Since(stopStart).Round(time.Millisecond), time.Since(testStart).Round(time.Millisecond))
}

// pageFor waits for the first firing notification of alert for server
// since a time, and returns it.
func pageFor(t *testing.T, h *harness, rx *receiver, since time.Time, alert, server string, within time.Duration) notification {
	t.Helper()
	var page notification
	h.waitFor("a firing "+alert+" for "+server, within, func() error {
		n, ok, err := rx.firstSince(since, func(n notification) bool {
			return n.Status == "firing" && len(n.alertsNamed(alert, server)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no firing %s for %s yet", alert, server)
		}
		page = n
		return err
	})
	t.Logf("%s page %s after the change: %s", alert, page.Received.Sub(since).Round(time.Millisecond), page)
	return page
}

// resolutionOf waits for the first resolved notification of alert for
// server since a time, and returns it.
func resolutionOf(t *testing.T, h *harness, rx *receiver, since time.Time, alert, server string, within time.Duration) notification {
	t.Helper()
	var resolved notification
	h.waitFor("a resolved "+alert+" for "+server, within, func() error {
		n, ok, err := rx.firstSince(since, func(n notification) bool {
			return n.Status == "resolved" && len(n.alertsNamed(alert, server)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no resolved %s for %s yet", alert, server)
		}
		resolved = n
		return err
	})
	return resolved
}

// noOtherPage fails the test if, since a time, any alert about server but
// the one expected was notified firing: a credential's page stands for its
// consequences (missing tools, failing calls and probes).
func noOtherPage(t *testing.T, rx *receiver, since time.Time, server, expected string) {
	t.Helper()
	got, err := rx.notifications()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range got {
		if n.Received.Before(since) || n.Status != "firing" {
			continue
		}
		for _, a := range n.Alerts {
			if a.Labels["server"] == server && a.Labels["alertname"] != expected {
				t.Errorf("%s paged beside %s: %s", a.Labels["alertname"], expected, n)
			}
		}
	}
}

// expectNoNotification fails the test when a healthy stack sends any
// notification during window (a strict check: the rules' for: are 0s).
func expectNoNotification(t *testing.T, h *harness, rx *receiver, window time.Duration) {
	t.Helper()
	quietUntil := time.Now().Add(window)
	for time.Now().Before(quietUntil) {
		h.checkRunning()
		if got, err := rx.notifications(); err != nil || len(got) > 0 {
			t.Fatalf("a healthy stack notified: %v %v", got, err)
		}
		time.Sleep(pollEvery)
	}
}

// waitAllQuiet waits until every group notified since a time is resolved
// and Prometheus holds no alert.
func waitAllQuiet(t *testing.T, h *harness, rx *receiver, prom promAPI, since time.Time) {
	t.Helper()
	h.waitFor("every paged group to be resolved and Prometheus to hold no alert", 45*time.Second, func() error {
		if err := allResolved(rx, since); err != nil {
			return err
		}
		alerts, err := prom.alerts()
		if err != nil {
			return fmt.Errorf("read Prometheus' alerts: %w", err)
		}
		if len(alerts) > 0 {
			return fmt.Errorf("prometheus still holds %s", describeAlerts(alerts))
		}
		return nil
	})
}

// revokeAPIKey revokes the report server's own API key (its file emptied):
// the server still lists both tools, so nothing about the surface pages,
// and its canary calls answer "401 Unauthorized": McpCredentialRejected
// pages, quoting the server; McpToolCallFailing stays quiet. The key written
// back resolves it. It returns how long each took.
func revokeAPIKey(t *testing.T, h *harness, rx *receiver, prom promAPI, apiKeyFile string) (detection, resolution time.Duration) {
	t.Helper()
	revoked := time.Now()
	writeFile(t, apiKeyFile, "")
	page := pageFor(t, h, rx, revoked, "McpCredentialRejected", watchedServer, callInterval+45*time.Second)
	detection = page.Received.Sub(revoked)
	for _, a := range page.alertsNamed("McpCredentialRejected", watchedServer) {
		if a.Labels["severity"] != "critical" || a.Labels["instance"] != "" ||
			!strings.Contains(a.Annotations["summary"], "401 Unauthorized") {
			t.Errorf("McpCredentialRejected: labels %v, summary %q (want critical, quoting the server's 401, no instance)", a.Labels, a.Annotations["summary"])
		}
	}
	// The surface is intact: the tools are listed, nothing is missing.
	if err := prom.queryEquals(fmt.Sprintf(`mcpwatch_tools_missing{job="mcpwatch",server=%q}`, watchedServer), 0); err != nil {
		t.Errorf("with the API key revoked: %v", err)
	}
	restored := time.Now()
	writeFile(t, apiKeyFile, "e2e-api-key\n")
	resolved := resolutionOf(t, h, rx, restored, "McpCredentialRejected", watchedServer, callInterval+45*time.Second)
	resolution = resolved.Received.Sub(restored)
	noOtherPage(t, rx, revoked, watchedServer, "McpCredentialRejected")
	return detection, resolution
}

// revokeGitHubToken revokes server-github's token at the GitHub stand-in,
// as its owner would at GitHub: the server keeps listing its 26 tools, and
// its canary search answers -32603 "Authentication Failed: Bad
// credentials"; McpCredentialRejected pages for github, naming the token
// and quoting the server. A renewed token written to the token file
// resolves it. It returns how long each took.
func revokeGitHubToken(t *testing.T, h *harness, rx *receiver, gh *peertest.API, tokenFile string) (detection, resolution time.Duration) {
	t.Helper()
	revoked := time.Now()
	gh.Revoke(gitHubToken)
	page := pageFor(t, h, rx, revoked, "McpCredentialRejected", "github", gitHubCallInterval+45*time.Second)
	detection = page.Received.Sub(revoked)
	for _, a := range page.alertsNamed("McpCredentialRejected", "github") {
		if a.Labels["severity"] != "critical" || a.Labels["credential"] != "env:GITHUB_PERSONAL_ACCESS_TOKEN" ||
			!strings.Contains(a.Annotations["summary"], `"Authentication Failed: Bad credentials"`) ||
			!strings.Contains(a.Annotations["description"], "Renew env:GITHUB_PERSONAL_ACCESS_TOKEN") {
			t.Errorf("McpCredentialRejected for github: labels %v, annotations %v (want the token named, the server quoted)", a.Labels, a.Annotations)
		}
	}
	renewed := time.Now()
	gh.Accept(gitHubRenewedToken)
	writeFile(t, tokenFile, gitHubRenewedToken+"\n")
	resolved := resolutionOf(t, h, rx, renewed, "McpCredentialRejected", "github", gitHubCallInterval+45*time.Second)
	resolution = resolved.Received.Sub(renewed)
	noOtherPage(t, rx, revoked, "github", "McpCredentialRejected")
	return detection, resolution
}

// checkPage checks that a page names the server and the missing tool where
// a person reads it: labels and annotations.
func checkPage(t *testing.T, page notification) {
	t.Helper()
	for _, a := range page.alertsNamed("McpToolsMissing", watchedServer) {
		if a.Labels["severity"] != "critical" {
			t.Errorf("McpToolsMissing severity %q, want critical", a.Labels["severity"])
		}
		tool := a.Labels["tool"]
		for _, key := range []string{"summary", "description"} {
			text := a.Annotations[key]
			if !strings.Contains(text, watchedServer) || !strings.Contains(text, tool) {
				t.Errorf("McpToolsMissing %s annotation %q does not name server %q and tool %q", key, text, watchedServer, tool)
			}
		}
	}
}

// allResolved reports an error while some alert group notified since the
// given time has its latest notification still firing.
func allResolved(rx *receiver, since time.Time) error {
	got, err := rx.notifications()
	if err != nil {
		return err
	}
	latest := map[string]notification{}
	for _, n := range got {
		if !n.Received.Before(since) {
			latest[fmt.Sprint(n.GroupLabels)] = n
		}
	}
	for group, n := range latest {
		if n.Status != "resolved" {
			return fmt.Errorf("group %s is still firing", group)
		}
	}
	return nil
}

// startPagePath starts the page path on the mcpwatch.yml written in h.dir:
// mcpwatch serve, an Alertmanager that sends to rx and a Prometheus that
// scrapes mcpwatch, and waits until all three are up and connected. It
// returns mcpwatch and the project's rules with every for: shortened,
// for loadRules once the test has seen the healthy stack.
func (h *harness) startPagePath(rx *receiver, prom promAPI, mcpwatchAddr, promAddr, amAddr string) (*proc, string) {
	t := h.t
	t.Helper()
	writeFile(t, filepath.Join(h.dir, "prometheus.yml"), prometheusConfig(mcpwatchAddr, amAddr))
	writeFile(t, filepath.Join(h.dir, "alertmanager.yml"), alertmanagerConfig(rx.url()))
	if err := os.MkdirAll(filepath.Join(h.dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	shortenedRules := filepath.Join(h.dir, "mcpwatch.rules.yml")
	shortenFor(t, filepath.Join(suite.root, "mixin", "prometheus-alerts.yaml"), shortenedRules)

	mcpwatch := h.start("mcpwatch", h.mcpwatchEnv, suite.mcpwatch, "serve",
		"--config.file", filepath.Join(h.dir, "mcpwatch.yml"),
		"--web.listen-address", mcpwatchAddr, "--log.level", "debug")
	h.startAlertmanager(amAddr)
	h.startPrometheus(promAddr)
	waitStackReady(h, prom, amAddr, mcpwatchAddr)
	return mcpwatch, shortenedRules
}

// waitStackReady waits for every mcpwatch, the Alertmanager and Prometheus
// to be ready, and for Prometheus to have found the Alertmanager.
func waitStackReady(h *harness, prom promAPI, amAddr string, mcpwatchAddrs ...string) {
	for _, addr := range mcpwatchAddrs {
		h.waitFor("mcpwatch "+addr+" ready", 30*time.Second, func() error { return httpOK("http://" + addr + "/-/ready") })
	}
	h.waitFor("alertmanager ready", 30*time.Second, func() error { return httpOK("http://" + amAddr + "/-/ready") })
	h.waitFor("prometheus ready", 60*time.Second, func() error { return httpOK(prom.base + "/-/ready") })
	waitAlertmanagerFound(h, prom, "prometheus to find the alertmanager")
}

// waitAlertmanagerFound waits for Prometheus to have an active Alertmanager.
func waitAlertmanagerFound(h *harness, prom promAPI, what string) {
	h.waitFor(what, 30*time.Second, func() error {
		urls, err := prom.activeAlertmanagers()
		if err == nil && len(urls) == 0 {
			err = fmt.Errorf("no active alertmanager")
		}
		return err
	})
}

// loadRules puts the rules file where Prometheus's rule_files glob finds it,
// reloads Prometheus, and waits until every group has been evaluated.
func loadRules(t *testing.T, h *harness, prom promAPI, rulesFile string) {
	t.Helper()
	if err := os.Rename(rulesFile, filepath.Join(h.dir, "rules", filepath.Base(rulesFile))); err != nil {
		t.Fatal(err)
	}
	reloaded := time.Now()
	if err := prom.reload(); err != nil {
		t.Fatalf("reloading prometheus with the rules: %v", err)
	}
	h.waitFor("prometheus to evaluate the rules", 30*time.Second, func() error {
		groups, err := prom.ruleGroups()
		if err != nil {
			return err
		}
		if len(groups) == 0 {
			return fmt.Errorf("no rule group loaded")
		}
		var names []string
		for _, g := range groups {
			if g.LastEvaluation.Before(reloaded) {
				return fmt.Errorf("group %s not evaluated since the reload", g.Name)
			}
			for _, r := range g.Rules {
				if r.Health != "ok" {
					return fmt.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
				}
				names = append(names, r.Name)
			}
		}
		if !slices.Contains(names, "McpToolsMissing") || !slices.Contains(names, "McpServerNoTools") {
			return fmt.Errorf("rules loaded %v lack McpToolsMissing or McpServerNoTools", names)
		}
		return nil
	})
}

// shortenFor runs the project's deploy/prometheus/shorten-for.sh.
func shortenFor(t *testing.T, in, out string) {
	t.Helper()
	script := filepath.Join(suite.root, "deploy", "prometheus", "shorten-for.sh")
	if b, err := exec.Command("sh", script, in, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "for: 1m") || !strings.Contains(string(b), "for: 0s") {
		t.Fatalf("%s left a for: other than 0s in %s", script, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

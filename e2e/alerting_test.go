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
)

const (
	// probeInterval is the report server's schedule in the test config.
	probeInterval = 2 * time.Second
	// callInterval is its call_schedule: the canary calls of both tools.
	callInterval = 2 * time.Second
	// latencyBound is the most a page or its resolution may take after the
	// credential changes: one probe interval, plus 15 s for the scrape, the
	// rule evaluation, Alertmanager and a busy machine.
	latencyBound = probeInterval + 15*time.Second
	// quietWindow is how long a healthy stack must send no notification.
	quietWindow = 5 * time.Second

	watchedServer = "report"
	token         = "e2e-token"
)

var lockedTools = []string{"fetch_daily_report", "list_report_dates"}

// TestAlertingTokenRemovedAndRestored runs the page path with the real
// programs: mcpwatch serve probes the example report server over stdio with
// its token read from a file, Prometheus scrapes it every second and
// evaluates the project's rules (their `for:` set to 0s by
// deploy/prometheus/shorten-for.sh), Alertmanager routes to a webhook here.
// A healthy stack sends nothing; emptying the token file (the report server
// then lists no tools) pages with the missing tools named; writing it back
// resolves the page. It reports how long each took.
func TestAlertingTokenRemovedAndRestored(t *testing.T) {
	need(t, "prometheus", "prometheus-alertmanager")
	testStart := time.Now()
	rx := newReceiver(t) // before the harness: its cleanup runs after the processes stopped
	h := newHarness(t)

	var (
		mcpwatchAddr = freeAddr(t)
		promAddr     = freeAddr(t)
		amAddr       = freeAddr(t)
		tokenFile    = filepath.Join(h.dir, "secrets", "report-token")
		apiKeyFile   = filepath.Join(h.dir, "secrets", "report-api-key")
		prom         = promAPI{base: "http://" + promAddr}
	)
	writeFile(t, tokenFile, token+"\n")
	writeFile(t, apiKeyFile, "e2e-api-key\n")
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), lockJSON(watchedServer, lockedTools))
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), mcpwatchConfig(suite.reportserver, "secrets/report-token", apiKeyFile))
	writeFile(t, filepath.Join(h.dir, "prometheus.yml"), prometheusConfig(mcpwatchAddr, amAddr))
	writeFile(t, filepath.Join(h.dir, "alertmanager.yml"), alertmanagerConfig(rx.url()))
	if err := os.MkdirAll(filepath.Join(h.dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	shortenedRules := filepath.Join(h.dir, "mcpwatch.rules.yml")
	shortenFor(t, filepath.Join(suite.root, "deploy", "prometheus", "rules", "mcpwatch.rules.yml"), shortenedRules)

	mcpwatch := h.start("mcpwatch", nil, suite.mcpwatch, "serve",
		"--config.file", filepath.Join(h.dir, "mcpwatch.yml"),
		"--web.listen-address", mcpwatchAddr, "--log.level", "debug")
	h.startAlertmanager(amAddr)
	h.startPrometheus(promAddr)

	// All healthy, and the numbers flowing: mcpwatch has probed, Prometheus
	// scrapes it and knows the Alertmanager.
	waitStackReady(h, prom, amAddr, mcpwatchAddr)
	sel := fmt.Sprintf(`{job="mcpwatch",server=%q}`, watchedServer)
	h.waitFor("prometheus to scrape mcpwatch and see both locked tools", 30*time.Second, func() error {
		for q, want := range map[string]float64{
			`up{job="mcpwatch"}`:                    1,
			"mcpwatch_probe_success" + sel:          1,
			"mcpwatch_tools_expected" + sel:         2,
			"mcpwatch_tools_missing" + sel:          0,
			"sum(mcpwatch_tool_missing" + sel + ")": 0,
			"sum(mcpwatch_call_success" + sel + ")": 2,
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

	quietUntil := time.Now().Add(quietWindow)
	for time.Now().Before(quietUntil) {
		h.checkRunning()
		if got, err := rx.notifications(); err != nil || len(got) > 0 {
			t.Fatalf("a healthy stack notified: %v %v", got, err)
		}
		time.Sleep(pollEvery)
	}
	if alerts, err := prom.alerts(); err != nil || len(alerts) > 0 {
		t.Fatalf("a healthy stack has alerts in Prometheus: %s %v", describeAlerts(alerts), err)
	}
	t.Logf("no notification and no pending alert during %s of a healthy stack", quietWindow)

	// The credential is gone.
	emptied := time.Now()
	writeFile(t, tokenFile, "")
	var page notification
	h.waitFor("the page for the missing tools", latencyBound+30*time.Second, func() error {
		n, ok, err := rx.firstSince(emptied, func(n notification) bool {
			return n.Status == "firing" &&
				slices.Contains(toolsIn(n.alertsNamed("McpToolsMissing", watchedServer)), lockedTools[0])
		})
		if err == nil && !ok {
			err = fmt.Errorf("no firing McpToolsMissing for %s naming %s yet", watchedServer, lockedTools[0])
		}
		page = n
		return err
	})
	detection := page.Received.Sub(emptied)
	t.Logf("page: %s", page)
	checkPage(t, page)
	// Every locked tool is named, in this notification or the next of its
	// group; and the server's tool list is empty, so McpServerNoTools pages too.
	h.waitFor("every missing tool and McpServerNoTools to be notified", 30*time.Second, func() error {
		return firedSince(rx, emptied)
	})

	// The credential is back.
	restored := time.Now()
	writeFile(t, tokenFile, token+"\n")
	var resolved notification
	h.waitFor("the resolved notification", latencyBound+30*time.Second, func() error {
		n, ok, err := rx.firstSince(restored, func(n notification) bool {
			return n.Status == "resolved" && len(n.alertsNamed("McpToolsMissing", watchedServer)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no resolved McpToolsMissing for %s yet", watchedServer)
		}
		resolved = n
		return err
	})
	resolution := resolved.Received.Sub(restored)
	t.Logf("resolved: %s", resolved)
	h.waitFor("every paged group to be resolved and Prometheus to hold no alert", 30*time.Second, func() error {
		if err := allResolved(rx, emptied); err != nil {
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

	callDetection, callResolution := revokeAPIKey(t, h, rx, prom, apiKeyFile)

	got, _ := rx.notifications()
	for _, n := range got {
		t.Logf("notification: %s", n)
	}
	t.Logf("LATENCY call failure (server's API key revoked -> firing McpToolCallFailing received): %s", callDetection.Round(time.Millisecond))
	t.Logf("LATENCY call recovery (API key written back -> resolved McpToolCallFailing received): %s", callResolution.Round(time.Millisecond))
	t.Logf("LATENCY detection (token file emptied -> firing notification received): %s", detection.Round(time.Millisecond))
	t.Logf("LATENCY resolution (token written back -> resolved notification received): %s", resolution.Round(time.Millisecond))
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

	// mcpwatch stops cleanly on SIGTERM (the harness would kill it otherwise).
	stopStart := time.Now()
	if err := mcpwatch.stop(); err != nil {
		t.Errorf("mcpwatch serve on SIGTERM: %v (want exit 0 within %s); log %s", err, stopGrace, mcpwatch.logPath)
	}
	t.Logf("mcpwatch stopped in %s; test took %s", time.Since(stopStart).Round(time.Millisecond), time.Since(testStart).Round(time.Millisecond))
}

// revokeAPIKey revokes the report server's own API key (its file emptied):
// the server still lists both tools, so nothing about the surface pages,
// but its canary calls fail and McpToolCallFailing pages, naming the tool
// and the reason; the key written back resolves it. It returns how long
// each took.
func revokeAPIKey(t *testing.T, h *harness, rx *receiver, prom promAPI, apiKeyFile string) (detection, resolution time.Duration) {
	t.Helper()
	revoked := time.Now()
	writeFile(t, apiKeyFile, "")
	var page notification
	h.waitFor("the page for the failing calls", callInterval+45*time.Second, func() error {
		n, ok, err := rx.firstSince(revoked, func(n notification) bool {
			return n.Status == "firing" && len(n.alertsNamed("McpToolCallFailing", watchedServer)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no firing McpToolCallFailing for %s yet", watchedServer)
		}
		page = n
		return err
	})
	detection = page.Received.Sub(revoked)
	t.Logf("call page: %s", page)
	for _, a := range page.alertsNamed("McpToolCallFailing", watchedServer) {
		if a.Labels["severity"] != "critical" || !slices.Contains(lockedTools, a.Labels["tool"]) ||
			!strings.Contains(a.Annotations["summary"], "fail: credential_rejected") || a.Labels["instance"] != "" {
			t.Errorf("McpToolCallFailing: labels %v, summary %q (want critical, a locked tool, reason credential_rejected, no instance)", a.Labels, a.Annotations["summary"])
		}
	}
	// The surface is intact: the tools are listed, nothing is missing.
	if err := prom.queryEquals(fmt.Sprintf(`mcpwatch_tools_missing{job="mcpwatch",server=%q}`, watchedServer), 0); err != nil {
		t.Errorf("with the API key revoked: %v", err)
	}
	if n, ok, _ := rx.firstSince(revoked, func(n notification) bool {
		return n.Status == "firing" && len(n.alertsNamed("McpToolsMissing", watchedServer)) > 0
	}); ok {
		t.Errorf("a revoked API key paged McpToolsMissing, but the tools are listed: %s", n)
	}

	restored := time.Now()
	writeFile(t, apiKeyFile, "e2e-api-key\n")
	var resolved notification
	h.waitFor("the resolved call page", callInterval+45*time.Second, func() error {
		n, ok, err := rx.firstSince(restored, func(n notification) bool {
			return n.Status == "resolved" && len(n.alertsNamed("McpToolCallFailing", watchedServer)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no resolved McpToolCallFailing for %s yet", watchedServer)
		}
		resolved = n
		return err
	})
	resolution = resolved.Received.Sub(restored)
	t.Logf("call page resolved: %s", resolved)
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

// firedSince reports an error until, since the given time, every locked tool
// has been notified firing in McpToolsMissing and McpServerNoTools has fired
// for the watched server.
func firedSince(rx *receiver, since time.Time) error {
	got, err := rx.notifications()
	if err != nil {
		return err
	}
	var tools []string
	noTools := false
	for _, n := range got {
		if n.Received.Before(since) || n.Status != "firing" {
			continue
		}
		tools = append(tools, toolsIn(n.alertsNamed("McpToolsMissing", watchedServer))...)
		noTools = noTools || len(n.alertsNamed("McpServerNoTools", watchedServer)) > 0
	}
	for _, want := range lockedTools {
		if !slices.Contains(tools, want) {
			return fmt.Errorf("no firing McpToolsMissing for tool %s yet (got %v)", want, tools)
		}
	}
	if !noTools {
		return fmt.Errorf("no firing McpServerNoTools for %s yet", watchedServer)
	}
	return nil
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

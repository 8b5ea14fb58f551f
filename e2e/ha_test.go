//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHAPairOnePage runs two identical mcpwatch replicas (mcpwatch-0 and
// mcpwatch-1, so their probes of the report server are half an interval
// apart) watching the same server, both scraped by one Prometheus with the
// project's rules, one Alertmanager and a webhook. The token file is
// emptied and one replica is killed at once: exactly one notification
// arrives for the missing credential (not one per replica, not a second
// when the killed replica's series go stale), the killed replica is a
// warning (McpwatchDown), nothing pages about mcpwatch itself; restoring the
// token resolves the page with exactly one notification.
func TestHAPairOnePage(t *testing.T) {
	need(t, "prometheus", "prometheus-alertmanager")
	rx := newReceiver(t)
	h := newHarness(t)
	var (
		addrs     = []string{freeAddr(t), freeAddr(t)}
		promAddr  = freeAddr(t)
		amAddr    = freeAddr(t)
		tokenFile = filepath.Join(h.dir, "secrets", "report-token")
		prom      = promAPI{base: "http://" + promAddr}
		locked    = lockedTools[:1]
	)
	writeFile(t, tokenFile, token+"\n")
	writeFile(t, filepath.Join(h.dir, "secrets", "report-scope"), "full\n")
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), lockJSON(watchedServer, locked))
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), mcpwatchConfig(suite.reportserver, "secrets/report-token", "", ""))
	writeFile(t, filepath.Join(h.dir, "prometheus.yml"), prometheusConfigTargets(amAddr, addrs...))
	writeFile(t, filepath.Join(h.dir, "alertmanager.yml"), alertmanagerConfig(rx.url()))
	if err := os.MkdirAll(filepath.Join(h.dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	shortenedRules := filepath.Join(h.dir, "mcpwatch.rules.yml")
	shortenFor(t, filepath.Join(suite.root, "mixin", "prometheus-alerts.yaml"), shortenedRules)

	var replicas []*proc
	for i, addr := range addrs {
		replicas = append(replicas, h.start(fmt.Sprintf("mcpwatch-%d", i), nil, suite.mcpwatch, "serve",
			"--config.file", filepath.Join(h.dir, "mcpwatch.yml"), "--web.listen-address", addr,
			"--replica", fmt.Sprintf("mcpwatch-%d", i), "--log.level", "debug",
			"--web.peer-urls", "http://"+addrs[0]+"/,http://"+addrs[1]+"/"))
	}
	h.startAlertmanager(amAddr)
	h.startPrometheus(promAddr)

	waitStackReady(h, prom, amAddr, addrs...)
	sel := fmt.Sprintf(`{job="mcpwatch",server=%q}`, watchedServer)
	h.waitFor("prometheus to scrape both replicas, each seeing the locked tool", 30*time.Second, func() error {
		for q, want := range map[string]float64{
			`count(up{job="mcpwatch"} == 1)`:                                                                2,
			"count(mcpwatch_probe_success" + sel + " == 1)":                                                 2,
			"count(mcpwatch_tools_missing" + sel + " == 0)":                                                 2,
			`count(mcpwatch_shard_info{index="0",total="1"})`:                                               2,
			`sum(max by (index) (mcpwatch_servers * on (instance) group_left (index) mcpwatch_shard_info))`: 1,
		} {
			if err := prom.queryEquals(q, want); err != nil {
				return err
			}
		}
		return nil
	})
	loadRules(t, h, prom, shortenedRules)
	// Prometheus 2.42 forgets the Alertmanagers it discovered when it
	// reloads, until discovery runs again (about 5 s); an alert that fires
	// meanwhile is sent only at the next resend, a minute later.
	waitAlertmanagerFound(h, prom, "prometheus to find the alertmanager again after the reload")
	healthy := time.Now()
	h.waitFor("two evaluations of a healthy pair", 30*time.Second, func() error {
		checkQuiet(t, prom, rx)
		return evaluatedSince(prom, healthy, 2)
	})
	checkQuiet(t, prom, rx)

	// The credential is gone, and replica 0 dies with it.
	emptied := time.Now()
	writeFile(t, tokenFile, "")
	replicas[0].kill()
	t.Logf("token emptied and %s killed", replicas[0].name)
	isPage := func(n notification) bool {
		return n.Status == "firing" && len(n.alertsNamed("McpCredentialMissing", watchedServer)) > 0
	}
	var page notification
	h.waitFor("the page for the missing credential", latencyBound+30*time.Second, func() error {
		n, ok, err := rx.firstSince(emptied, isPage)
		if err == nil && !ok {
			err = fmt.Errorf("no firing McpCredentialMissing for %s yet", watchedServer)
		}
		page = n
		return err
	})
	t.Logf("page %s after the token was emptied: %s", page.Received.Sub(emptied).Round(time.Millisecond), page)

	// Let the stack run on: the survivor probes three more times, Prometheus
	// evaluates after that, and the killed replica's warning arrives. A
	// duplicate (an alert per replica) or a flap (the dead replica's stale
	// series resolving it) would be a second notification by then.
	survivor := "http://" + addrs[1]
	base := probesOf(t, survivor, watchedServer)
	h.waitFor("the survivor to probe 3 more times and McpwatchDown to be notified", 60*time.Second, func() error {
		if n := probesOf(t, survivor, watchedServer); n < base+3 {
			return fmt.Errorf("survivor probed %d times since the page, want 3", n-base)
		}
		_, ok, err := rx.firstSince(emptied, func(n notification) bool {
			return n.Status == "firing" && len(n.alertsNamed("McpwatchDown", "")) > 0
		})
		if err != nil {
			return fmt.Errorf("no McpwatchDown notification yet: %w", err)
		}
		if !ok {
			return errors.New("no McpwatchDown notification yet")
		}
		return nil
	})
	if down, ok, _ := rx.firstSince(emptied, func(n notification) bool { return len(n.alertsNamed("McpwatchDown", "")) > 0 }); ok {
		t.Logf("McpwatchDown (warning) %s after the kill", down.Received.Sub(emptied).Round(time.Millisecond))
	}
	settled := time.Now()
	h.waitFor("Prometheus to evaluate twice more", 30*time.Second, func() error { return evaluatedSince(prom, settled, 2) })
	if err := exactlyOne(rx, emptied, "McpCredentialMissing", "firing"); err != nil {
		t.Error(err)
	}
	got, _ := rx.notifications()
	for _, n := range got {
		for _, a := range n.Alerts {
			switch a.Labels["alertname"] {
			case "McpwatchDown":
				if a.Labels["severity"] != "warning" || a.Labels["instance"] != addrs[0] {
					t.Errorf("McpwatchDown %v: want a warning for the killed replica %s", a.Labels, addrs[0])
				}
			case "McpwatchAbsent", "McpwatchShardDown":
				t.Errorf("%s notified while a replica is up: %s", a.Labels["alertname"], n)
			}
			if _, ok := a.Labels["instance"]; ok && a.Labels["server"] != "" {
				t.Errorf("an alert about server %s carries instance %s: each replica would page", a.Labels["server"], a.Labels["instance"])
			}
		}
	}

	// The credential is back: one resolved notification.
	restored := time.Now()
	writeFile(t, tokenFile, token+"\n")
	h.waitFor("the resolved notification", latencyBound+30*time.Second, func() error {
		_, ok, err := rx.firstSince(restored, func(n notification) bool {
			return n.Status == "resolved" && len(n.alertsNamed("McpCredentialMissing", watchedServer)) > 0
		})
		if err == nil && !ok {
			err = fmt.Errorf("no resolved McpCredentialMissing yet")
		}
		return err
	})
	base = probesOf(t, survivor, watchedServer)
	h.waitFor("the survivor to probe twice more", 30*time.Second, func() error {
		if n := probesOf(t, survivor, watchedServer); n < base+2 {
			return fmt.Errorf("%d probes since the resolution", n-base)
		}
		return nil
	})
	settled = time.Now()
	h.waitFor("Prometheus to evaluate twice more", 30*time.Second, func() error { return evaluatedSince(prom, settled, 2) })
	if err := exactlyOne(rx, restored, "McpCredentialMissing", "resolved"); err != nil {
		t.Error(err)
	}
	got, _ = rx.notifications()
	for _, n := range got {
		t.Logf("notification: %s", n)
	}
}

// prometheusConfigTargets scrapes every target in job mcpwatch every second
// and sends to the Alertmanager (none if empty).
func prometheusConfigTargets(alertmanagerAddr string, targets ...string) string {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files:\n  - rules/*.yml\n")
	if alertmanagerAddr != "" {
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", alertmanagerAddr)
	}
	b.WriteString("scrape_configs:\n  - job_name: mcpwatch\n    static_configs:\n      - targets:\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "          - %q\n", t)
	}
	return b.String()
}

// probesOf returns the probes one mcpwatch has finished of a server.
func probesOf(t *testing.T, base, server string) int {
	t.Helper()
	st, err := apiServerOf(base, server)
	if err != nil {
		t.Fatal(err)
	}
	return st.Probes
}

type apiStatus struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Probes int    `json:"probes"`
}

func apiServerOf(base, server string) (apiStatus, error) {
	var st apiStatus
	resp, err := http.Get(base + "/api/v1/servers/" + server)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s/api/v1/servers/%s: %s", base, server, resp.Status)
	}
	if err == nil {
		err = json.Unmarshal(body, &st)
	}
	return st, err
}

// evaluatedSince reports an error until every rule group has been evaluated
// n times after since (at Prometheus's 1 s evaluation interval, n-1 seconds
// past since at least).
func evaluatedSince(prom promAPI, since time.Time, n int) error {
	groups, err := prom.ruleGroups()
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		return fmt.Errorf("no rule group")
	}
	for _, g := range groups {
		if g.LastEvaluation.Before(since.Add(time.Duration(n-1) * time.Second)) {
			return fmt.Errorf("group %s last evaluated at %s", g.Name, g.LastEvaluation.Format("15:04:05.000"))
		}
	}
	return nil
}

// checkQuiet fails the test when a healthy stack has an alert in
// Prometheus or has notified.
func checkQuiet(t *testing.T, prom promAPI, rx *receiver) {
	t.Helper()
	if got, err := rx.notifications(); err != nil || len(got) > 0 {
		t.Fatalf("a healthy stack notified: %v %v", got, err)
	}
	if alerts, err := prom.alerts(); err != nil || len(alerts) > 0 {
		t.Fatalf("a healthy stack has alerts in Prometheus: %s %v", describeAlerts(alerts), err)
	}
}

// exactlyOne reports an error unless exactly one notification of the given
// status for alertname and the watched server arrived since the given time,
// holding exactly one alert for it.
func exactlyOne(rx *receiver, since time.Time, alertname, status string) error {
	got, err := rx.notifications()
	if err != nil {
		return err
	}
	var matching []notification
	for _, n := range got {
		if !n.Received.Before(since) && n.Status == status && len(n.alertsNamed(alertname, watchedServer)) > 0 {
			matching = append(matching, n)
		}
	}
	if len(matching) != 1 {
		return fmt.Errorf("%d %s notifications of %s for %s, want exactly 1: %v", len(matching), status, alertname, watchedServer, matching)
	}
	if alerts := matching[0].alertsNamed(alertname, watchedServer); len(alerts) != 1 {
		return fmt.Errorf("the %s notification of %s holds %d alerts for %s, want 1: %s", status, alertname, len(alerts), watchedServer, matching[0])
	}
	return nil
}

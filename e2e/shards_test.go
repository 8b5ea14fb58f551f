//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

const (
	shardTotal   = 3
	shardServers = 30
)

// TestShardsSplitTheFleet runs 3 mcpwatch shards over 30 servers (the report
// server over streamable HTTP, under 30 names), scraped by one Prometheus
// with the project's rules: every server is probed by exactly one shard
// (from each shard's /api/v1/servers), in the shard its name hashes to;
// each shard exports its shard and its count; the dashboard's "Servers
// watched" query over the real series sums the shards to 30; a healthy
// sharded stack has no alert; killing shard 1 fires McpwatchShardDown for
// it (and not McpwatchAbsent).
func TestShardsSplitTheFleet(t *testing.T) {
	need(t, "prometheus")
	h := newHarness(t)
	var (
		reportAddr = freeAddr(t)
		promAddr   = freeAddr(t)
		prom       = promAPI{base: "http://" + promAddr}
		addrs      []string
		peers      []string
		names      []string
	)
	for i := range shardTotal {
		addrs = append(addrs, freeAddr(t))
		peers = append(peers, "http://"+addrs[i]+"/")
	}
	servers := map[string]any{}
	lock := map[string][]string{}
	for i := range shardServers {
		name := fmt.Sprintf("server-%02d", i)
		names = append(names, name)
		servers[name] = map[string]any{
			"url": "http://" + reportAddr + "/mcp", "transport": "http",
			"headers": map[string]string{"Authorization": "Bearer " + token},
		}
		lock[name] = lockedTools
	}
	cfg, _ := json.Marshal(map[string]any{
		"defaults": map[string]any{"schedule": "@every " + probeInterval.String(), "timeout": "10s"},
		"lock":     "mcp-tools.lock.json",
		"servers":  servers,
	})
	lockBytes, _ := json.Marshal(lock)
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), string(cfg)) // JSON is YAML
	writeFile(t, filepath.Join(h.dir, "mcp-tools.lock.json"), string(lockBytes))
	writeFile(t, filepath.Join(h.dir, "prometheus.yml"), prometheusConfigTargets("", addrs...))
	if err := os.MkdirAll(filepath.Join(h.dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	shortenedRules := filepath.Join(h.dir, "mcpwatch.rules.yml")
	shortenFor(t, filepath.Join(suite.root, "mixin", "prometheus-alerts.yaml"), shortenedRules)

	h.start("reportserver", []string{"REPORT_API_TOKEN=" + token}, suite.reportserver, "--http", reportAddr)
	h.waitFor("the report server", 30*time.Second, func() error { return tcpAccepts(reportAddr) })
	shards := make([]*proc, shardTotal)
	for i, addr := range addrs {
		shards[i] = h.start(fmt.Sprintf("mcpwatch-%d", i), nil, suite.mcpwatch, "serve",
			"--config.file", filepath.Join(h.dir, "mcpwatch.yml"), "--web.listen-address", addr,
			"--shard.total", fmt.Sprint(shardTotal), "--shard.index", fmt.Sprint(i),
			"--replica", fmt.Sprintf("mcpwatch-%d", i), "--web.peer-urls", strings.Join(peers, ","))
	}
	h.startPrometheus(promAddr)

	// Every server in exactly one shard, the one its name hashes to, probed
	// there and OK.
	owner := map[string]int{}
	counts := make([]int, shardTotal)
	for i, addr := range addrs {
		base := "http://" + addr
		h.waitFor(fmt.Sprintf("shard %d ready", i), 30*time.Second, func() error { return httpOK(base + "/-/ready") })
		var list []apiStatus
		h.waitFor(fmt.Sprintf("shard %d to probe each of its servers", i), 60*time.Second, func() error {
			var err error
			if list, err = apiServers(base); err != nil {
				return err
			}
			for _, s := range list {
				if s.Probes < 1 || s.State != "ok" {
					return fmt.Errorf("%s: %d probes, state %s", s.Name, s.Probes, s.State)
				}
			}
			return nil
		})
		for _, s := range list {
			if prev, ok := owner[s.Name]; ok {
				t.Errorf("%s is probed by shard %d and shard %d", s.Name, prev, i)
			}
			owner[s.Name] = i
			if want := shard.Of(s.Name, shardTotal); want != i {
				t.Errorf("%s is probed by shard %d; its name hashes to %d", s.Name, i, want)
			}
		}
		counts[i] = len(list)
		page := httpBody(t, base+"/")
		if !strings.Contains(page, fmt.Sprintf("shard %d of %d", i, shardTotal)) {
			t.Errorf("shard %d's status page does not say \"shard %d of %d\"", i, i, shardTotal)
		}
		for _, p := range peers {
			if !strings.Contains(page, `href="`+p+`"`) {
				t.Errorf("shard %d's status page does not link %s", i, p)
			}
		}
	}
	for _, name := range names {
		if _, ok := owner[name]; !ok {
			t.Errorf("%s is probed by no shard", name)
		}
	}
	t.Logf("servers per shard: %v (of %d)", counts, shardServers)

	// Prometheus sees each shard's own count and each server once; the
	// dashboard's fleet query sums the shards.
	h.waitFor("prometheus to scrape the 3 shards", 60*time.Second, func() error {
		for i, addr := range addrs {
			q := fmt.Sprintf(`mcpwatch_servers{instance=%q} * on (instance) group_left mcpwatch_shard_info{index="%d",total="%d"}`, addr, i, shardTotal)
			if err := prom.queryEquals(q, float64(counts[i])); err != nil {
				return err
			}
		}
		return prom.queryEquals(`count(count by (server) (mcpwatch_probe_success == 1))`, shardServers)
	})
	if got, err := prom.query(`count by (server) (mcpwatch_probe_success) > 1`); err != nil || len(got) > 0 {
		t.Errorf("servers exported by more than one shard: %v %v", got, err)
	}
	watched := dashboardQuery(t, "Servers watched")
	if err := prom.queryEquals(watched, shardServers); err != nil {
		t.Errorf("the dashboard's Servers watched over the shards: %v", err)
	}

	// Healthy: no alert. Then shard 1 dies: McpwatchShardDown for it.
	loadRules(t, h, prom, shortenedRules)
	healthy := time.Now()
	h.waitFor("two evaluations of a healthy sharded fleet", 30*time.Second, func() error {
		if alerts, err := prom.alerts(); err != nil || len(alerts) > 0 {
			t.Fatalf("a healthy sharded fleet has alerts: %s %v", describeAlerts(alerts), err)
		}
		return evaluatedSince(prom, healthy, 2)
	})
	shards[1].kill()
	h.waitFor("McpwatchShardDown for shard 1", 30*time.Second, func() error {
		alerts, err := prom.alerts()
		if err != nil {
			return err
		}
		for _, a := range alerts {
			if a.Labels["alertname"] == "McpwatchShardDown" && a.State == "firing" {
				if a.Labels["index"] != "1" || a.Labels["total"] != fmt.Sprint(shardTotal) {
					t.Fatalf("McpwatchShardDown %v, want shard 1 of %d", a.Labels, shardTotal)
				}
				return nil
			}
		}
		return fmt.Errorf("no firing McpwatchShardDown yet: %s", describeAlerts(alerts))
	})
	alerts, _ := prom.alerts()
	for _, a := range alerts {
		if a.Labels["alertname"] == "McpwatchAbsent" || (a.Labels["alertname"] == "McpwatchShardDown" && a.Labels["index"] != "1") {
			t.Errorf("%v fires with two shards up", a.Labels)
		}
	}
	t.Logf("alerts with shard 1 down: %s", describeAlerts(alerts))
}

// apiServers reads one mcpwatch's /api/v1/servers.
func apiServers(base string) ([]apiStatus, error) {
	var out struct {
		Servers []apiStatus `json:"servers"`
	}
	resp, err := http.Get(base + "/api/v1/servers")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s/api/v1/servers: %s", base, resp.Status)
	}
	if err == nil {
		err = json.Unmarshal(body, &out)
	}
	return out.Servers, err
}

func httpBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dashboardQuery returns the query of the dashboard panel titled title,
// with the job and instance variables at "all".
func dashboardQuery(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(suite.root, "mixin", "dashboards_out", "mcpwatch.json"))
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(d.Panels, func(p panel) bool { return p.Title == title && len(p.Targets) == 1 })
	if i < 0 {
		t.Fatalf("mixin/dashboards_out/mcpwatch.json has no panel %q with one query", title)
	}
	return strings.NewReplacer(`"$job"`, `"mcpwatch"`, `"$instance"`, `".*"`).Replace(d.Panels[i].Targets[0].Expr)
}

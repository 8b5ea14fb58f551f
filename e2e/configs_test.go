//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The configurations of the alerting test. Strings go through %q: a Go
// double-quoted ASCII string is a YAML double-quoted string.

// lockJSON is a lock with one server and its tools.
func lockJSON(server string, tools []string) string {
	b, err := json.MarshalIndent(map[string][]string{server: tools}, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// mcpwatchConfig watches the report server over stdio, its token read from
// tokenFile (relative to the config) at every probe. With an apiKeyFile it
// also calls both tools on a call schedule as fast as the probes; the
// server reads its own API key from that file at every call. extra is more
// of the servers: mapping, indented as its entries.
func mcpwatchConfig(reportserver, tokenFile, apiKeyFile, extra string) string {
	calls := ""
	if apiKeyFile != "" {
		calls = fmt.Sprintf(`    args: [--api-key-file, %q]
    calls:
      fetch_daily_report:
        input: {date: "2026-08-01"}
        expect: {status: pass, not_error_code: [401, 403], requiredFields: [orders]}
      list_report_dates:
        expect: {contains: "2026-08-01"}
`, apiKeyFile)
	}
	return fmt.Sprintf(`defaults:
  schedule: %q
  call_schedule: %q
  timeout: 10s
lock: mcp-tools.lock.json
servers:
  %s:
    command: %q
    env:
      REPORT_API_TOKEN: %q
      REPORT_SCOPE: "${file:secrets/report-scope}"
%s%s`, fmt.Sprintf("@every %s", probeInterval), fmt.Sprintf("@every %s", callInterval), watchedServer, reportserver, "${file:"+tokenFile+"}", calls, extra)
}

// githubServer is the servers: entry of the pinned server-github, its
// token read from tokenFile at every probe, reaching the GitHub stand-in
// through env (peertest.NodeEnv). Its canary is a repository search, which
// it does not annotate: it takes both opt-ins. It probes rarely and calls
// every gitHubCallInterval: each is a Node process.
func githubServer(node, script, tokenFile string, env map[string]string) string {
	var lines strings.Builder
	for _, k := range sortedKeys(env) {
		fmt.Fprintf(&lines, "      %s: %q\n", k, strings.ReplaceAll(env[k], "$", "$$"))
	}
	return fmt.Sprintf(`  github:
    command: %q
    args: [%q]
    schedule: "@every 1m"
    call_schedule: %q
    timeout: 30s
    env:
      GITHUB_PERSONAL_ACCESS_TOKEN: %q
%s    calls:
      search_repositories:
        input: {query: "mcp"}
        allowSideEffects: true
        expect: {status: pass, not_error_code: [401, 403]}
    allow_destructive_calls: [search_repositories]
`, node, script, fmt.Sprintf("@every %s", gitHubCallInterval), "${file:"+tokenFile+"}", lines.String())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// prometheusConfig scrapes mcpwatch and evaluates every second, and sends
// to the Alertmanager. Rules are picked up from rules/ (see loadRules).
func prometheusConfig(mcpwatchAddr, alertmanagerAddr string) string {
	return fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - rules/*.yml
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: mcpwatch
    static_configs:
      - targets: [%q]
`, alertmanagerAddr, mcpwatchAddr)
}

// alertmanagerConfig sends every alert at once to the webhook, grouped as
// deploy/alertmanager/alertmanager.yml groups them, with resolutions.
func alertmanagerConfig(webhookURL string) string {
	return fmt.Sprintf(`route:
  receiver: webhook
  group_by: [alertname, server]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: %q
        send_resolved: true
`, webhookURL)
}

package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// The alert rules are the monitoring mixin's (mixin/): its jsonnet is the
// source, prometheus-alerts.yaml what it generates and every consumer reads,
// tests/alerts.test.yml their promtool tests (run by the mixin's module,
// with its own and another job selector).
const (
	rulesFile   = "../mixin/prometheus-alerts.yaml"
	rulesSource = "../mixin/alerts/alerts.libsonnet"
	rulesTests  = "../mixin/tests/alerts.test.yml"
	runbook     = "RUNBOOK.md"
)

// The alerts the project promises (docs/metrics.md, Alerts), by severity.
var wantAlerts = map[string]string{
	"McpToolsMissing":            "critical",
	"McpServerNoTools":           "critical",
	"McpForbiddenToolPresent":    "critical",
	"McpToolsChanged":            "warning",
	"McpProbeFailing":            "critical",
	"McpProbeStale":              "warning",
	"McpToolCallFailing":         "critical",
	"McpwatchDown":               "warning",
	"McpwatchShardDown":          "critical",
	"McpwatchAbsent":             "critical",
	"McpwatchConfigReloadFailed": "warning",
	// A week ahead as a ticket, the last day as a page: two rules, one name.
	"McpCredentialExpiringSoon":   "warning|critical",
	"McpCredentialRefreshFailing": "critical",
	"McpCredentialMissing":        "critical",
	"McpCredentialRejected":       "critical",
	"McpUpstreamUnreachable":      "warning",
	"McpwatchLockReadFailed":      "warning",
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// decodeStrictYAML decodes YAML, rejecting keys the struct does not know.
func decodeStrictYAML(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func yamlUnmarshal(b []byte, v any) error { return yaml.Unmarshal(b, v) }

func loadRules(t *testing.T, path string) []rule {
	t.Helper()
	var f ruleFile
	decodeStrictYAML(t, readFile(t, path), &f)
	var rules []rule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// runbookURL is the runbook of the newest release, where every alert links:
// a link into a tag never moves under a page.
func runbookURL(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - `).FindSubmatch(readFile(t, "../CHANGELOG.md"))
	if m == nil {
		t.Fatal("CHANGELOG.md names no released version")
	}
	return "https://github.com/mcpwatch/mcpwatch/blob/v" + string(m[1]) + "/deploy/RUNBOOK.md"
}

func TestRulesConventions(t *testing.T) {
	rules := loadRules(t, rulesFile)
	book := string(readFile(t, runbook))
	camel := regexp.MustCompile(`^[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+$`)
	var names []string
	for _, r := range rules {
		names = append(names, r.Alert)
		if !camel.MatchString(r.Alert) {
			t.Errorf("%q: alert names are CamelCase", r.Alert)
		}
		if got, want := r.Labels["severity"], wantAlerts[r.Alert]; !slices.Contains(strings.Split(want, "|"), got) {
			t.Errorf("%s: severity %q, want %q", r.Alert, got, want)
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, a)
			}
		}
		// absent() has no series to take labels from.
		if !strings.HasPrefix(r.Expr, "absent(") && !strings.Contains(r.Annotations["summary"]+r.Annotations["description"], "$labels.") {
			t.Errorf("%s: summary and description name no label (server, instance)", r.Alert)
		}
		if want := runbookURL(t) + "#" + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !strings.Contains(book, "\n## "+r.Alert+"\n") {
			t.Errorf("%s: %s has no section \"## %s\"", r.Alert, runbook, r.Alert)
		}
	}
	var want []string
	for n := range wantAlerts {
		want = append(want, n)
	}
	sort.Strings(want)
	sort.Strings(names)
	names = slices.Compact(names)
	if !slices.Equal(names, want) {
		t.Errorf("alerts %v, want %v", names, want)
	}
}

// TestRulesAreHASafe holds every rule to the HA convention of the rules'
// source: two replicas of mcpwatch may be scraped, so a rule over mcpwatch's
// series aggregates the target labels away (instance, pod) and says why in
// a comment of the jsonnet ("// HA: ..."); only rules on up (about one
// target) keep them.
func TestRulesAreHASafe(t *testing.T) {
	raw := string(readFile(t, rulesSource))
	by := regexp.MustCompile(`\b(?:max|min|sum|count|avg|topk|bottomk) by \(([^)]*)\)`)
	for _, r := range loadRules(t, rulesFile) {
		start := strings.Index(raw, `alert: "`+r.Alert+`",`)
		if start < 0 {
			t.Fatalf("%s: not in %s", r.Alert, rulesSource)
		}
		block := raw[start:]
		if next := strings.Index(block[1:], "alert: "); next >= 0 {
			block = block[:next+1]
		}
		if !regexp.MustCompile(`(?m)^\s*// HA: `).MatchString(block) {
			t.Errorf("%s: no \"// HA: ...\" comment saying how it behaves over two replicas", r.Alert)
		}
		if strings.Contains(r.Expr, "up{") {
			continue // about targets: per instance, or absent()
		}
		groups := by.FindAllStringSubmatch(r.Expr, -1)
		if len(groups) == 0 {
			t.Errorf("%s: no aggregation by (...): two replicas would alert twice", r.Alert)
		}
		for _, g := range groups {
			for _, l := range strings.Split(g[1], ",") {
				if l := strings.TrimSpace(l); l == "instance" || l == "pod" {
					t.Errorf("%s: aggregates by %s: two replicas would alert twice", r.Alert, l)
				}
			}
		}
	}
}

// TestRulesQueryExportedMetrics fails when a rule (or a query in its
// annotations) reads a metric mcpwatch does not export: a rename in the
// metrics package must not silently disarm an alert.
func TestRulesQueryExportedMetrics(t *testing.T) {
	exported := metrics.SeriesNames()
	name := regexp.MustCompile(`\bmcpwatch_[a-zA-Z0-9_]+`)
	for _, r := range loadRules(t, rulesFile) {
		text := r.Expr
		for _, a := range r.Annotations {
			text += "\n" + a
		}
		for _, m := range name.FindAllString(text, -1) {
			if !slices.Contains(exported, m) {
				t.Errorf("%s uses %s, which mcpwatch does not export", r.Alert, m)
			}
		}
	}
}

type ruleTests struct {
	RuleFiles          []string `yaml:"rule_files"`
	EvaluationInterval string   `yaml:"evaluation_interval"`
	Tests              []struct {
		Interval    string `yaml:"interval"`
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			Alertname string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestEveryRuleIsUnitTested reads the promtool test file: for every alert,
// some test case must show it quiet, then firing, then quiet again.
func TestEveryRuleIsUnitTested(t *testing.T) {
	var f ruleTests
	decodeStrictYAML(t, readFile(t, rulesTests), &f)
	covered := map[string]bool{}
	for _, tc := range f.Tests {
		type eval struct {
			at     string
			firing bool
		}
		byAlert := map[string][]eval{}
		for _, a := range tc.AlertRuleTest {
			byAlert[a.Alertname] = append(byAlert[a.Alertname], eval{a.EvalTime, len(a.ExpAlerts) > 0})
		}
		for alert, evals := range byAlert {
			sort.Slice(evals, func(i, j int) bool { return minutes(t, evals[i].at) < minutes(t, evals[j].at) })
			var pattern string
			for _, e := range evals {
				s := "q"
				if e.firing {
					s = "F"
				}
				if !strings.HasSuffix(pattern, s) {
					pattern += s
				}
			}
			if strings.Contains(pattern, "qFq") {
				covered[alert] = true
			}
		}
	}
	for alert := range wantAlerts {
		if !covered[alert] {
			t.Errorf("%s: no test case in %s shows it quiet, firing, then resolved", alert, rulesTests)
		}
	}
}

func minutes(t *testing.T, d string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(d, "%dm", &n); err != nil {
		t.Fatalf("eval_time %q: write it in minutes", d)
	}
	return n
}

// The example scrape configuration loads, with the mixin's rule files it
// names (the mixin's own test runs their unit tests).
func TestPromtoolConfig(t *testing.T) {
	promtool := needTool(t, "promtool")
	out := runTool(t, "prometheus", promtool, "check", "config", "prometheus.yml")
	t.Log(out)
	if !strings.Contains(out, "prometheus-alerts.yaml") || !strings.Contains(out, "prometheus-rules.yaml") {
		t.Errorf("prometheus.yml does not load the mixin's alerts and recording rules:\n%s", out)
	}
}

// TestShortenFor runs the script the end-to-end test uses: every `for:`
// becomes 0s (30s on absent(), which is true before the first scrape), and
// nothing else changes.
func TestShortenFor(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("awk not installed")
	}
	out := filepath.Join(t.TempDir(), "short.rules.yml")
	runTool(t, ".", "sh", "prometheus/shorten-for.sh", rulesFile, out)
	orig, short := loadRules(t, rulesFile), loadRules(t, out)
	if len(orig) != len(short) {
		t.Fatalf("%d rules in, %d out", len(orig), len(short))
	}
	var withFor int
	for i := range orig {
		want := "0s"
		if strings.Contains(orig[i].Expr, "absent(") {
			want = "30s"
		}
		if short[i].For != "" && short[i].For != want {
			t.Errorf("%s: for %q after shortening, want %q", short[i].Alert, short[i].For, want)
		}
		if orig[i].For != "" {
			withFor++
		}
		a, b := orig[i], short[i]
		a.For, b.For = "", ""
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s changed beyond its for:\n%v\n%v", a.Alert, a, b)
		}
	}
	if withFor == 0 {
		t.Fatal("no rule has a for: to shorten; the test proves nothing")
	}
	runTool(t, ".", needTool(t, "promtool"), "check", "rules", out)
}

func TestShortenForUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no arguments", nil},
		{"missing input", []string{"/nonexistent/rules.yml", filepath.Join(t.TempDir(), "out.yml")}},
		{"nothing to shorten", []string{runbook, filepath.Join(t.TempDir(), "out.yml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", append([]string{"prometheus/shorten-for.sh"}, tt.args...)...)
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Fatalf("succeeded, want a failure; output:\n%s", out)
			}
			if len(tt.args) == 2 {
				if _, err := os.Stat(tt.args[1]); err == nil {
					t.Errorf("%s was written despite the failure", tt.args[1])
				}
			}
		})
	}
}

// docs/metrics.md's table of alerts names every promised alert with its
// severity, and no other.
func TestAlertsDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Alerts\n")
	if !ok {
		t.Fatal("docs/metrics.md has no '## Alerts' section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]string{}
	for _, row := range regexp.MustCompile(`(?m)^\| (Mcp\w+) \| ([a-z /]+) \|`).FindAllStringSubmatch(section, -1) {
		documented[row[1]] = strings.ReplaceAll(row[2], " / ", "|")
	}
	for name, severity := range wantAlerts {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/metrics.md does not list %s", name)
		} else if got != severity {
			t.Errorf("docs/metrics.md gives %s severity %q; the rules give %q", name, got, severity)
		}
	}
	for name := range documented {
		if _, ok := wantAlerts[name]; !ok {
			t.Errorf("docs/metrics.md lists %s, which the rules do not have", name)
		}
	}
}

package dashboards_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"go.yaml.in/yaml/v3"
)

// rulesGlob is where the alert rules live: the monitoring mixin's generated
// rule files (the PrometheusRule of deploy/kubernetes is generated from them).
const rulesGlob = "../mixin/prometheus-*.yaml"

// alertRule is an alert of the rule files and the metrics its expression
// reads.
type alertRule struct {
	alert, file string
	metrics     []string
}

// readAlerts reads every alert rule of the rule files matching glob.
func readAlerts(t *testing.T, glob string) []alertRule {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files at %s (%v)", glob, err)
	}
	var out []alertRule
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Rules []struct {
					Alert string `yaml:"alert"`
					Expr  string `yaml:"expr"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					out = append(out, alertRule{alert: r.Alert, file: file, metrics: metricNames(r.Expr)})
				}
			}
		}
	}
	return out
}

// metricNames are the metrics an expression selects, each once, in order.
func metricNames(expr string) []string {
	var names []string
	for _, s := range selectors(expr) {
		if !slices.Contains(names, s.name) {
			names = append(names, s.name)
		}
	}
	return names
}

// shownBy maps each metric to the panels whose queries select it, as
// "Row / Panel".
func shownBy(d *dashboard.Dashboard) map[string][]string {
	out := map[string][]string{}
	add := func(row string, p *dashboard.Panel) {
		where := row + " / " + deref(p.Title)
		for _, t := range p.Targets {
			q, ok := t.(*prometheus.Dataquery)
			if !ok {
				continue
			}
			for _, name := range metricNames(q.Expr) {
				if !slices.Contains(out[name], where) {
					out[name] = append(out[name], where)
				}
			}
		}
	}
	row := "(no row)"
	for _, p := range d.Panels {
		if r := p.RowPanel; r != nil {
			row = deref(r.Title)
			for i := range r.Panels {
				add(row, &r.Panels[i])
			}
		}
		if p.Panel != nil {
			add(row, p.Panel)
		}
	}
	return out
}

// uncovered lists, for each alert, what it reads and which panel shows it,
// and the metrics no panel shows.
func uncovered(alerts []alertRule, shown map[string][]string) (report, missing []string) {
	for _, a := range alerts {
		for _, m := range a.metrics {
			panels := shown[m]
			if len(panels) == 0 {
				missing = append(missing, fmt.Sprintf("%s reads %s, which no panel shows", a.alert, m))
				continue
			}
			report = append(report, fmt.Sprintf("%-28s %-48s %s", a.alert, m, panels[0]))
		}
	}
	return report, missing
}

// TestEveryAlertMetricHasAPanel: whoever is paged opens the dashboard and
// finds what paged them. Every metric an alert rule reads is selected by at
// least one panel; the test prints each alert's metrics and the first panel
// that shows them.
func TestEveryAlertMetricHasAPanel(t *testing.T) {
	d, err := decodeStrict([]byte(readDashboard(t)))
	if err != nil {
		t.Fatal(err)
	}
	alerts := readAlerts(t, rulesGlob)
	report, missing := uncovered(alerts, shownBy(d))
	t.Logf("%d alerts; each metric read and the panel that shows it (row / panel):\n%s", len(alerts), strings.Join(report, "\n"))
	for _, m := range missing {
		t.Error(m)
	}
	if len(report) == 0 {
		t.Fatal("no alert metric found: the rule files were not read")
	}
}

// TestUncoveredAlertMetricIsReported: an alert reading a metric no panel
// selects is named, so the test above can fail.
func TestUncoveredAlertMetricIsReported(t *testing.T) {
	d, err := decodeStrict([]byte(strings.ReplaceAll(readDashboard(t),
		`min by (server, credential) (mcpwatch_credential_present{`, `min by (server, credential) (mcpwatch_credential_presence{`)))
	if err != nil {
		t.Fatal(err)
	}
	alerts := []alertRule{{alert: "McpCredentialMissing", metrics: metricNames(`min by (server, credential) (mcpwatch_credential_present) == 0`)}}
	_, missing := uncovered(alerts, shownBy(d))
	if want := "McpCredentialMissing reads mcpwatch_credential_present, which no panel shows"; !slices.Contains(missing, want) {
		t.Fatalf("missing = %q, want it to hold %q", missing, want)
	}
}

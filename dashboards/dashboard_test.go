package dashboards_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// dashboardFile is the dashboard users import: the monitoring mixin's,
// generated from the panels dashboards/gen builds with the mixin's _config.
const dashboardFile = "../mixin/dashboards_out/mcpwatch.json"

func readDashboard(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exported is what a panel may query: what mcpwatch exports.
func exported() []string { return metrics.SeriesNames() }

// TestDashboard checks the committed dashboard: strict decoding, the
// conventions, and that every metric it queries is one mcpwatch exports.
func TestDashboard(t *testing.T) {
	for _, p := range check([]byte(readDashboard(t)), exported()) {
		t.Error(p)
	}
}

// TestDashboardHasThePanelsAsked pins the panels the project promises, so a
// refactoring of the generator cannot drop one unnoticed.
func TestDashboardHasThePanelsAsked(t *testing.T) {
	raw := readDashboard(t)
	for _, want := range []string{
		`"title": "Tool surface per server"`,
		`"title": "Missing tools"`,
		`mcpwatch_tool_missing{job=~\"$job\",instance=~\"$instance\"} == 1`,
		`"title": "Probe success ratio"`,
		`"title": "Probe latency by phase"`,
		`"title": "Failures by reason"`,
		`"title": "Tool surface"`,
		`"title": "Since last success"`,
		`"title": "Server info"`,
		`mcpwatch_server_info{job=~\"$job\",instance=~\"$instance\",server=~\"$server\"}`,
		`"title": "Credentials"`,
		`"title": "Credentials missing"`,
		`"title": "Credentials rejected"`,
		`"title": "Credentials expiring within 7 days"`,
		`"title": "Upstreams unreachable"`,
		`"title": "Request latency by method"`,
		`"title": "Skipped probes by reason"`,
		`"title": "Change listeners"`,
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	// Each table of the Credentials row, and OAuth clients, links a server
	// to its row.
	if n := strings.Count(raw, `var-server=${__value.raw:percentencode}`); n != 5 {
		t.Errorf("%d server links, want 5 (the four credential tables and OAuth clients)", n)
	}
}

// TestCheckCatchesMistakes breaks the dashboard one way at a time and
// expects the check to name the problem: a checker that passes everything
// would pass the real dashboard too. It breaks the panels as dashboards/gen
// writes them (the mixin's input, in the builders' field order; the mixin
// sorts the fields), which the check reads as it reads the mixin's output.
func TestCheckCatchesMistakes(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"renamed metric", `mcpwatch_tools_missing{`, `mcpwatch_tools_absent{`,
			"queries mcpwatch_tools_absent, which mcpwatch does not export"},
		{"gauge read as a histogram", `mcpwatch_probe_duration_seconds{`, `mcpwatch_probe_duration_seconds_bucket{`,
			"mcpwatch_probe_duration_seconds_bucket, which mcpwatch does not export"},
		{"histogram read in another form", `mcp_client_operation_duration_seconds_bucket{`, `mcp_client_operation_duration_seconds{`,
			"queries mcp_client_operation_duration_seconds, which mcpwatch does not export"},
		{"metric renamed in a variable", `label_values(mcpwatch_build_info, job)`, `label_values(mcpwatch_build, job)`,
			"variable job: queries mcpwatch_build, which"},
		{"unknown field", `"transparent": false,`, `"transparent": false, "colour": "red",`,
			"unexpected field 'colour'"},
		{"fixed datasource", `"uid": "${datasource}"`, `"uid": "P1809F7CD0C75ACF3"`,
			"datasource must be the $datasource variable"},
		{"no description", `"description": "Share of probes that succeeded, per server, from the probe and failure counters.",`, ``,
			`panel "Probe success ratio": no description`},
		{"no unit", `"unit": "percentunit",`, ``, `panel "Probe success ratio": no unit`},
		{"fixed rate range", `[$__rate_interval]`, `[5m]`, "rate over [5m]; use [$__rate_interval]"},
		{"no instance matcher", `mcpwatch_probe_duration_seconds{job=~\"$job\",instance=~\"$instance\"}`, `mcpwatch_probe_duration_seconds{job=~\"$job\"}`,
			`lacks job=~"$job" and instance=~"$instance"`},
		{"job not multi-select", `"multi": true,`, `"multi": false,`, `variable "job": must be multi-select`},
	}
	b, err := os.ReadFile("../mixin/dashboards/panels.json")
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	if problems := check(b, exported()); len(problems) > 0 {
		t.Fatalf("the panels as written fail the check: %q", problems)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(raw, tt.old) {
				t.Fatalf("the dashboard no longer contains %s; update this case", tt.old)
			}
			broken := strings.Replace(raw, tt.old, tt.new, 1)
			problems := check([]byte(broken), exported())
			for _, p := range problems {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Fatalf("no problem containing %q; got %q", tt.want, problems)
		})
	}
}

func TestSelectors(t *testing.T) {
	tests := []struct {
		expr string
		want []selector
	}{
		{`sum(mcpwatch_servers{job=~"$job"})`, []selector{{"mcpwatch_servers", `{job=~"$job"}`}}},
		{`count(up == 0) or vector(0)`, []selector{{"up", ""}}},
		{`sum by (server, reason) (rate(x_total{a="b"}[$__rate_interval]))`, []selector{{"x_total", `{a="b"}`}}},
		{`1 - (a{} or 0 * b{}) / c{x="y,z"}`, []selector{{"a", "{}"}, {"b", "{}"}, {"c", `{x="y,z"}`}}},
		{`time() - ts{job="j"}`, []selector{{"ts", `{job="j"}`}}},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket{}[5m])))`, []selector{{"h_bucket", "{}"}}},
		{`a{} and on (server) b{}`, []selector{{"a", "{}"}, {"b", "{}"}}},
	}
	for _, tt := range tests {
		got := selectors(tt.expr)
		if len(got) != len(tt.want) {
			t.Errorf("selectors(%q) = %q, want %q", tt.expr, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("selectors(%q) = %q, want %q", tt.expr, got, tt.want)
				break
			}
		}
	}
}

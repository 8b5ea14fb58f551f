package dashboards_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// statQuery returns the one query of the stat panel titled title.
func statQuery(t *testing.T, title string) string {
	t.Helper()
	for _, q := range dashboardQueries(t) {
		if strings.HasPrefix(q.where, "panel \""+title+"\"") {
			return q.expr
		}
	}
	t.Fatalf("no panel %q with a query", title)
	return ""
}

// TestFleetViewOverShardsAndPairs evaluates the fleet view's stat panels
// with promtool over the series a sharded fleet exports: 3 shards of 10
// servers, shard 0 run by an HA pair (replicas a0 and b0). The panels count
// every shard's servers once and each pair once: 30 servers, not 40; a
// server failing on one replica of its pair only is not failing; missing
// tools two replicas both see count once. Skipped without promtool (fails
// under CI).
func TestFleetViewOverShardsAndPairs(t *testing.T) {
	promtool := testtool.Need(t, "promtool", "prometheus")
	grafana := strings.NewReplacer(`"$job"`, `"mcpwatch"`, `"$instance"`, `".*"`)
	panels := []struct {
		title string
		want  float64
	}{
		{"Servers watched", 30},
		{"Servers failing", 1},
		{"Locked tools missing", 3},
		{"Forbidden tools present", 0},
	}

	var series strings.Builder
	add := func(metric, labels string, value float64) {
		fmt.Fprintf(&series, "      - series: '%s{job=\"mcpwatch\",%s}'\n        values: '%gx3'\n", metric, labels, value)
	}
	for _, r := range []struct{ instance, index string }{{"a0", "0"}, {"b0", "0"}, {"s1", "1"}, {"s2", "2"}} {
		inst := fmt.Sprintf(`instance="%s:9713"`, r.instance)
		add("mcpwatch_servers", inst, 10)
		add("mcpwatch_shard_info", fmt.Sprintf(`%s,index="%s",total="3"`, inst, r.index), 1)
	}
	// shard 0: "both" misses 2 tools on both replicas; "half" fails on a0 only.
	for _, inst := range []string{"a0", "b0"} {
		add("mcpwatch_tools_missing", fmt.Sprintf(`instance="%s:9713",server="both"`, inst), 2)
		add("mcpwatch_probe_success", fmt.Sprintf(`instance="%s:9713",server="both"`, inst), 1)
		add("mcpwatch_tools_forbidden", fmt.Sprintf(`instance="%s:9713",server="both"`, inst), 0)
	}
	add("mcpwatch_probe_success", `instance="a0:9713",server="half"`, 0)
	add("mcpwatch_probe_success", `instance="b0:9713",server="half"`, 1)
	// shard 1: "down" fails; shard 2: "one" misses 1 tool.
	add("mcpwatch_probe_success", `instance="s1:9713",server="down"`, 0)
	add("mcpwatch_probe_success", `instance="s2:9713",server="one"`, 1)
	add("mcpwatch_tools_missing", `instance="s2:9713",server="one"`, 1)

	var tests strings.Builder
	for _, p := range panels {
		expr, _ := json.Marshal(grafana.Replace(statQuery(t, p.title))) // a JSON string is a YAML string
		fmt.Fprintf(&tests, "      - expr: %s\n        eval_time: 2m\n        exp_samples:\n          - labels: '{}'\n            value: %g\n", expr, p.want)
	}
	promtoolTest(t, promtool, "fleet", series.String(), tests.String())
}

// promtoolTest runs promtool's rule tests on the queries of a set of
// panels: input series and promql_expr_test cases as YAML (indented as
// they stand in the file), no rules; name names the file and the failure.
func promtoolTest(t *testing.T, promtool, name, series, tests string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "none.yml"), []byte("groups: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := "rule_files: [none.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" +
		series + "    promql_expr_test:\n" + tests
	if err := os.WriteFile(filepath.Join(dir, name+".test.yml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", name+".test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules on the %s panels: %v\n%s\n%s", name, err, out, file)
	}
}

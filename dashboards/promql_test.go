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

// dashboardQueries returns the queries of every panel of the dashboard.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	d, err := decodeStrict([]byte(readDashboard(t)))
	if err != nil {
		t.Fatal(err)
	}
	var c checked
	return checkPanels(d, &c)
}

// TestQueriesParse has promtool parse every panel query, with Grafana's
// interval variables replaced by durations, by checking them as recording
// rules. Skipped, saying so, without promtool (Debian package prometheus);
// it fails there under CI, which installs it.
func TestQueriesParse(t *testing.T) {
	promtool := testtool.Need(t, "promtool", "prometheus")
	qs := dashboardQueries(t)
	if len(qs) == 0 {
		t.Fatal("no panel queries found")
	}
	grafana := strings.NewReplacer("$__rate_interval", "1m", "$__range", "1h", "$__interval", "15s")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range qs {
		expr, _ := json.Marshal(grafana.Replace(q.expr)) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %s\n", i, expr)
	}
	path := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, rules.String())
	}
}

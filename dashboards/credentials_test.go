package dashboards_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// TestCredentialsRowOverAPair evaluates the Credentials row's tables with
// promtool over an HA pair (replicas a and b) at t=120s: each credential
// problem is listed once per server and credential, however many replicas
// see it, with the seconds since the server's last success on any replica
// (-1, shown as "none seen", when none passed); expiries within a week only,
// OAuth access tokens left out. Skipped without promtool (fails under CI).
func TestCredentialsRowOverAPair(t *testing.T) {
	promtool := testtool.Need(t, "promtool", "prometheus")
	grafana := strings.NewReplacer(`"$job"`, `"mcpwatch"`, `"$instance"`, `".*"`)

	var series strings.Builder
	add := func(metric, labels string, value float64) {
		fmt.Fprintf(&series, "      - series: '%s{job=\"mcpwatch\",%s}'\n        values: '%gx3'\n", metric, labels, value)
	}
	for _, inst := range []string{"a", "b"} {
		i := fmt.Sprintf(`instance="%s:9713"`, inst)
		// "empty": a credential empty on both replicas; passed last at 60 on b.
		add("mcpwatch_credential_present", i+`,server="empty",credential="env:GITHUB_TOKEN"`, 0)
		add("mcpwatch_credential_present", i+`,server="empty",credential="header:X-Other"`, 1)
		// "denied": rejected on both, never passed.
		add("mcpwatch_credential_rejected_info", i+`,server="denied",credential="header:Authorization",message="Bad credentials"`, 1)
		// "soon" expires in an hour, "later" in 30 days, "renewed" is an access token.
		add("mcpwatch_credential_expiry_timestamp_seconds", i+`,server="soon",credential="header:Authorization"`, 120+3600)
		add("mcpwatch_credential_expiry_timestamp_seconds", i+`,server="later",credential="env:API_JWT"`, 120+30*86400)
		add("mcpwatch_credential_expiry_timestamp_seconds", i+`,server="renewed",credential="oauth_access_token"`, 120+60)
	}
	add("mcpwatch_last_success_timestamp_seconds", `instance="a:9713",server="empty"`, 30)
	add("mcpwatch_last_success_timestamp_seconds", `instance="b:9713",server="empty"`, 60)
	// "dark": its upstream unreachable, seen by a only; passed last at 100.
	add("mcpwatch_upstream_unreachable_info", `instance="a:9713",server="dark",credential="",message="upstream connect error"`, 1)
	add("mcpwatch_last_success_timestamp_seconds", `instance="a:9713",server="dark"`, 100)

	panels := []struct{ title, samples string }{
		{"Credentials missing", `{server="empty",credential="env:GITHUB_TOKEN"}: 60`},
		{"Credentials rejected", `{server="denied",credential="header:Authorization",message="Bad credentials"}: -1`},
		{"Credentials expiring within 7 days", `{server="soon",credential="header:Authorization"}: 3600`},
		{"Upstreams unreachable", `{server="dark",message="upstream connect error"}: 20`}, // an empty label is no label,
	}
	var tests strings.Builder
	for _, p := range panels {
		labels, value, _ := strings.Cut(p.samples, ": ")
		expr, _ := json.Marshal(grafana.Replace(statQuery(t, p.title))) // a JSON string is a YAML string
		fmt.Fprintf(&tests, "      - expr: %s\n        eval_time: 2m\n        exp_samples:\n          - labels: '%s'\n            value: %s\n", expr, labels, value)
	}
	promtoolTest(t, promtool, "credentials", series.String(), tests.String())
}

package deploy_test

import (
	"slices"
	"testing"
)

const alertmanagerConfig = "alertmanager/alertmanager.yml"

// receiverFor is the routing the example promises: critical pages,
// warning opens a ticket.
var receiverFor = map[string]string{"critical": "pager", "warning": "ticket"}

func TestAlertmanagerGroupsByServer(t *testing.T) {
	var cfg struct {
		Route struct {
			GroupBy []string `yaml:"group_by"`
		} `yaml:"route"`
	}
	// Not strict: only the grouping is read here; amtool checks the rest.
	if err := yamlUnmarshal(readFile(t, alertmanagerConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"alertname", "server"} {
		if !slices.Contains(cfg.Route.GroupBy, l) {
			t.Errorf("route.group_by %v lacks %s", cfg.Route.GroupBy, l)
		}
	}
}

func TestAmtoolCheckConfig(t *testing.T) {
	amtool := needTool(t, "amtool")
	t.Log(runTool(t, ".", amtool, "check-config", alertmanagerConfig))
}

// TestAmtoolRoutes routes every alert of the rules file, with its severity,
// and checks it reaches the receiver its severity promises.
func TestAmtoolRoutes(t *testing.T) {
	amtool := needTool(t, "amtool")
	for _, r := range loadRules(t, rulesFile) {
		sev := r.Labels["severity"]
		want, ok := receiverFor[sev]
		if !ok {
			t.Errorf("%s: severity %q has no receiver", r.Alert, sev)
			continue
		}
		runTool(t, ".", amtool, "config", "routes", "test",
			"--config.file="+alertmanagerConfig, "--verify.receivers="+want,
			"alertname="+r.Alert, "severity="+sev, "server=report", "instance=127.0.0.1:9713")
	}
	// Something without a severity still reaches someone.
	runTool(t, ".", amtool, "config", "routes", "test",
		"--config.file="+alertmanagerConfig, "--verify.receivers=ticket", "alertname=Unlabelled")
}

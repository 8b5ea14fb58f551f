package mixin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// committed reads the committed file of each name files has.
func committed(t *testing.T, files map[string][]byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// stale lists the files whose committed bytes differ from the rendered
// ones, sorted.
func stale(rendered, committed map[string][]byte) []string {
	var out []string
	for name, b := range rendered {
		if !bytes.Equal(committed[name], b) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Every generated file is what the jsonnet makes now: a hand edit, or a
// change of the jsonnet not generated, fails here.
func TestCommittedFilesAreCurrent(t *testing.T) {
	files, err := Render(".", "")
	if err != nil {
		t.Fatal(err)
	}
	if s := stale(files, committed(t, files)); len(s) > 0 {
		t.Fatalf("out of date with the mixin's jsonnet: %v; change the .libsonnet files, not these, then run: cd mixin && go generate ./...", s)
	}
}

// The drift test above sees a hand edit of a generated file.
func TestDriftCaughtOnAHandEdit(t *testing.T) {
	files, err := Render(".", "")
	if err != nil {
		t.Fatal(err)
	}
	edited := committed(t, files)
	edited[AlertsFile] = bytes.Replace(edited[AlertsFile], []byte("for: 1m"), []byte("for: 10m"), 1)
	if s := stale(files, edited); !slices.Equal(s, []string{AlertsFile}) {
		t.Fatalf("a hand edit of %s: stale %v", AlertsFile, s)
	}
}

// promtool checks the generated rule files and runs their unit tests
// (tests/), on the rules as committed.
func TestPromtool(t *testing.T) {
	promtool := testtool.Need(t, "promtool", "prometheus")
	run(t, ".", promtool, "check", "rules", AlertsFile, RulesFile)
	run(t, "tests", promtool, "test", "rules", "alerts.test.yml", "rules.test.yml")
}

// The same unit tests pass on rules rendered with another job selector, the
// series of mcpwatch's job renamed to match; and fail with the series left
// as they were, so the selector is what the rules match on.
func TestPromtoolWithAnotherSelector(t *testing.T) {
	promtool := testtool.Need(t, "promtool", "prometheus")
	files, err := Render(".", `{ _config+:: { mcpwatchSelector: 'job="mcp-fleet"' } }`)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(files[AlertsFile], committed(t, map[string][]byte{AlertsFile: nil})[AlertsFile]) {
		t.Fatal("the selector changed nothing in the alerts")
	}
	for _, want := range []string{`up{job="mcp-fleet"} == 0`, `absent(up{job="mcp-fleet"} == 1)`} {
		if !bytes.Contains(files[AlertsFile], []byte(want)) {
			t.Errorf("the alerts rendered with job=\"mcp-fleet\" lack %s", want)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AlertsFile), files[AlertsFile], 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("tests/alerts.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.NewReplacer(`job="mcpwatch"`, `job="mcp-fleet"`, `job=\"mcpwatch\"`, `job=\"mcp-fleet\"`,
		`job: mcpwatch,`, `job: mcp-fleet,`, `job: mcpwatch}`, `job: mcp-fleet}`, `of job mcpwatch `, `of job mcp-fleet `, `(job mcpwatch)`, `(job mcp-fleet)`).Replace(string(tests))
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "tests", "alerts.test.yml"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(renamed)
	run(t, filepath.Join(dir, "tests"), promtool, "test", "rules", "alerts.test.yml")

	write(string(tests))
	cmd := exec.Command(promtool, "test", "rules", "alerts.test.yml")
	cmd.Dir = filepath.Join(dir, "tests")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "McpwatchAbsent") {
		t.Errorf("the tests of job mcpwatch passed on rules selecting job mcp-fleet (%v): the selector is not what the rules match on\n%s", err, out)
	}
}

// The dashboard follows the selector and the runbook base too.
func TestDashboardConfig(t *testing.T) {
	files, err := Render(".", `{ _config+:: { mcpwatchSelector: 'job=~"mcp-.*"', runbookURLBase: 'https://runbooks.example.com/mcpwatch.md', dashboardUID: 'mcp-fleet' } }`)
	if err != nil {
		t.Fatal(err)
	}
	d := string(files[DashboardFile])
	for _, want := range []string{`"query": "label_values(mcpwatch_build_info{job=~\"mcp-.*\"}, job)"`, `"url": "https://runbooks.example.com/mcpwatch.md"`, `"uid": "mcp-fleet"`} {
		if !strings.Contains(d, want) {
			t.Errorf("the dashboard lacks %s", want)
		}
	}
	if !strings.Contains(string(files[AlertsFile]), "runbook_url: https://runbooks.example.com/mcpwatch.md#mcptoolsmissing") {
		t.Error("the alerts' runbook_url does not follow runbookURLBase")
	}
}

// A `for:` and a threshold of _config reach the rules and the text that
// states them.
func TestConfigReachesTheRules(t *testing.T) {
	files, err := Render(".", `{ _config+:: { forDurations+: { McpwatchDown: '15m' }, credentialExpiryWarningSeconds: 14 * 86400, probeStaleIntervals: 5 } }`)
	if err != nil {
		t.Fatal(err)
	}
	a := string(files[AlertsFile])
	for _, want := range []string{"at {{ $labels.instance }} for 15 minutes.", "for: 15m", ") - time() < 1209600\n", "within 2 weeks.", "> 5 * max by (server) (mcpwatch_probe_interval_seconds)"} {
		if !strings.Contains(a, want) {
			t.Errorf("the alerts lack %q", want)
		}
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q in %s: %v\n%s", name, args, dir, err, out)
	}
	t.Logf("%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
}

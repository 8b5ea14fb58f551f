package doctor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// The small rules a finding rests on, each at its edges.
func TestSmallRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"an if: on github.event_name depends on the event", mentionsEvent("github.event_name == 'push'"), true},
		{"an if: on a GitLab source does", mentionsEvent(`$CI_PIPELINE_SOURCE == "schedule"`), true},
		{"an if: on a step's output does not", mentionsEvent("steps.download.outputs.installed != 'true'"), false},
		{"always() uploads after a failure", runsOnFailure("always()"), true},
		{"!cancelled() does", runsOnFailure("${{ !cancelled() }}"), true},
		{"success() does not", runsOnFailure("success()"), false},
		{"no if: does not", runsOnFailure(""), false},
		{"an image of mcpwatch by tag", isMcpwatchImage("ghcr.io/mcpwatch/mcpwatch:v0.2.0"), true},
		{"by digest", isMcpwatchImage("mcpwatch@sha256:0123"), true},
		{"on a registry with a port", isMcpwatchImage("localhost:5000/mcpwatch"), true},
		{"another image", isMcpwatchImage("ghcr.io/mcpwatch/mcpwatch-scale:v1"), false},
		{"a registry named mcpwatch", isMcpwatchImage("mcpwatch:5000/other"), false},
		{"-v takes a value", dockerRunTakesValue("-v"), true},
		{"-it does not", dockerRunTakesValue("-it"), false},
		{"--rm does not", dockerRunTakesValue("--rm"), false},
		{"--env=X does not", dockerRunTakesValue("--env=X"), false},
		{"--network does", dockerRunTakesValue("--network"), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v", tc.name, tc.got)
		}
	}
	for _, tc := range []struct {
		script string
		want   bool
	}{
		{"exit 78", true}, {"exit $?", true}, {"false", true}, {"exit 0", false}, {"exit", false}, {"true", false},
	} {
		if got := exitsNonZero(parseScript(tc.script)[0]); got != tc.want {
			t.Errorf("exitsNonZero(%q) = %v", tc.script, got)
		}
	}
	for _, tc := range []struct{ value, want string }{
		{"${{ secrets.A }}", "${{ secrets.A }}"},
		{"Bearer ${{ secrets.A }}-${{ vars.B }}", "${{ secrets.A }} ${{ vars.B }}"},
		{"$CI_JOB_TOKEN", "$CI_JOB_TOKEN"},
		{"plain", ""},
	} {
		if got := describeSource(tc.value); got != tc.want {
			t.Errorf("describeSource(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}
	if got := andList([]string{"a", "b", "c"}); got != "a, b and c" {
		t.Errorf("andList: %q", got)
	}
	if got := andList([]string{"a"}); got != "a" {
		t.Errorf("andList of one: %q", got)
	}
}

// Where a key or a server is written in the configuration's file, JSON
// or YAML, for a finding's line; 1 when it is not there.
func TestLinesInConfigurationFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yml := filepath.Join(dir, "mcpwatch.yml")
	js := filepath.Join(dir, ".mcp.json")
	for name, content := range map[string]string{
		yml: "# servers\nservers:\n  memory:\n    command: npx\n    start_timeout: 30s\n",
		js:  "{\n  \"mcpServers\": {\n    \"memory\": {\"command\": \"npx\"}\n  }\n}\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"a YAML key", keyLine(yml, "servers.memory.start_timeout"), 5},
		{"as much of a key as is there", keyLine(yml, "servers.memory.timeout"), 3},
		{"a JSON key", keyLine(js, "mcpServers.memory.command"), 3},
		{"a quoted part", keyLine(js, `mcpServers."memory"`), 3},
		{"no file", keyLine(filepath.Join(dir, "none.yml"), "servers"), 1},
		{"a YAML server", serverLine(config.Server{Name: "memory", Source: yml}), 3},
		{"a JSON server", serverLine(config.Server{Name: "memory", Source: js}), 3},
		{"a server not there", serverLine(config.Server{Name: "other", Source: yml}), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: line %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// With two workflows that run mcpwatch check, the one with the fewest
// findings is judged, and only its findings are reported.
func TestGateJudgedAcrossWorkflows(t *testing.T) {
	t.Parallel()
	r := newRepo(t, systemGitHub)
	r.files[".github/workflows/a-nightly.yml"] = "on: {schedule: [{cron: '0 1 * * *'}]}\njobs:\n  nightly:\n    runs-on: ubuntu-latest\n    steps:\n      - run: mcpwatch check\n"
	rep := r.examine(t)
	holds(t, rep)
	if rep.Gate.File != githubGate {
		t.Errorf("judged %s, want the workflow that holds", rep.Gate.File)
	}
	r.editCI(t, " --strict", "")
	rep = r.examine(t)
	if rep.Gate.File != githubGate || len(rep.Findings) != 1 {
		t.Errorf("judged %s with %d findings, want the gate's one (no --strict):\n%s", rep.Gate.File, len(rep.Findings), text(t, rep))
	}
}

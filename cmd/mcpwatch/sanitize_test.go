package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// hostileNames are tool names a server may send to inject a GitHub
// workflow command (a line of its own, or a name printed at the start of a
// line) or a terminal escape sequence.
var hostileNames = []string{
	"x\n::error::injected by the server\n::stop-commands::tok",
	"::warning::at the start",
	"\x1b[2J\x1b]0;pwned\x07\u202ereversed",
}

// unsafeOutput finds what a terminal or a CI runner would act on: a control
// character other than a line break, a bidirectional override, or a line
// that is a workflow command mcpwatch did not write.
var unsafeOutput = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u202e]|(?m)^\\s*(::(error|warning|notice|stop-commands)|##(\\[|vso\\[))")

func hostileServer() map[string]any {
	tools := probetest.DefaultTools()
	for _, n := range hostileNames {
		tools = append(tools, probetest.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
	}
	path, args, env := probetest.Command(probetest.Config{Tools: tools, ServerName: "srv\x1b[31m"})
	return map[string]any{"command": path, "args": args, "env": env}
}

// Whatever a server names its tools, no output of check (text, github,
// junit), lock or probe carries a raw control character or a workflow
// command of the server's making.
func TestNoInjectionThroughToolNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"hostile": hostileServer()}))
	writeJSON(t, dir, "mcp-tools.lock.json", map[string][]string{"hostile": {"fetch_daily_report", "list_report_dates"}})
	summary := filepath.Join(dir, "summary.md")
	outputs := map[string]string{}
	for _, format := range []string{"text", "github", "junit"} {
		r := runBin(t, dir, map[string]string{"GITHUB_STEP_SUMMARY": summary}, "check", "--format", format)
		if r.code != exitOK {
			t.Fatalf("check --format %s: want exit 0 (extra tools pass), got %s", format, r)
		}
		outputs["check "+format] = r.stdout + r.stderr
	}
	outputs["step summary"] = string(readFile(t, summary))
	if err := os.Remove(filepath.Join(dir, "mcp-tools.lock.json")); err != nil {
		t.Fatal(err)
	}
	outputs["lock"] = runBin(t, dir, nil, "lock").stdout
	s := hostileServer()
	args := []string{"probe"}
	for k, v := range s["env"].(map[string]string) {
		args = append(args, "--env", k+"="+v)
	}
	args = append(append(args, "--transcript", "--", s["command"].(string)), s["args"].([]string)...)
	outputs["probe"] = runBin(t, dir, nil, args...).stdout

	for name, out := range outputs {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "::") && (name == "check github") && strings.Contains(line, " title=MCP preflight") {
				continue // mcpwatch's own annotations
			}
			if m := unsafeOutput.FindString(line); m != "" {
				t.Errorf("%s: %q in line %q", name, m, line)
			}
		}
	}
	assertContains(t, "check text", outputs["check text"], `x\n::error::injected by the server\n::stop-commands::tok`)
	assertContains(t, "lock", outputs["lock"], `  hostile: + \x1b[2J\x1b]0;pwned\a\u202ereversed, ::warning::at the start,`)
	assertContains(t, "probe", outputs["probe"], `srv\x1b[31m`, "\n  \\x3a:warning::at the start\n", `  \x1b[2J\x1b]0;pwned\a\u202ereversed`)
}

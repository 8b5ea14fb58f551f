package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runConfig(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLI(t, env, append([]string{"config"}, args...)...)
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const secretConfig = `
servers:
  report:
    command: /bin/sh
    args: [-c, "exec reportserver", --token, hunter2-arg]
    env:
      REPORT_API_TOKEN: "${file:./secrets/token}"
      LITERAL: hunter2-literal
  remote:
    url: https://bob:hunter2-pw@mcp.example.com/mcp?key=hunter2-query
    headers:
      Authorization: "Bearer ${MCPWATCH_TEST_TOKEN}"
      X-Static: hunter2-header
`

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcpwatch.yml")
	writeTestFile(t, file, secretConfig)
	writeTestFile(t, filepath.Join(dir, "secrets", "token"), "hunter2-file\n")
	client := filepath.Join(dir, ".mcp.json")
	writeTestFile(t, client, `{"mcpServers": {"report": {"command": "/bin/sh", "env": {"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}}}}`)
	writeTestFile(t, filepath.Join(dir, "broken.yml"), "servers:\n  report: {command: x, tiemout: 5s}\n  remote: {url: https://x.example.com, transport: ws}\n")

	cases := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		stdout   []string // substrings, in order
		stderr   []string
		noStdout []string
	}{
		{name: "usable", args: []string{"check", "-c", file}, env: map[string]string{"MCPWATCH_TEST_TOKEN": "hunter2-env"}, code: 0,
			stdout: []string{"configuration: " + file, "remote  (auto, from " + file + ")",
				"url:      https://<redacted>@mcp.example.com/mcp?key=<redacted>",
				"headers:  Authorization: Bearer ${MCPWATCH_TEST_TOKEN}", "X-Static: <redacted>",
				"report  (stdio, from " + file + ")", `command:  /bin/sh -c 'exec reportserver' --token <redacted>`,
				"env:      LITERAL=<redacted>", "REPORT_API_TOKEN=${file:./secrets/token}",
				"OK: 2 server(s), 0 problem(s)"}},
		{name: "unset variable", args: []string{"check", "--config.file", file}, code: exitConfig,
			stdout: []string{"1 problem(s) a probe would meet now:",
				`  - server "remote" (` + file + `) headers.Authorization: credential missing: ${MCPWATCH_TEST_TOKEN} is not set; a probe would fail with credential_missing`,
				"FAILED: 2 server(s), 1 problem(s)"}},
		{name: "broken", args: []string{"check", "-c", filepath.Join(dir, "broken.yml")}, code: exitConfig,
			stderr: []string{"mcpwatch config check: " + filepath.Join(dir, "broken.yml") + " is unusable:",
				"  - " + filepath.Join(dir, "broken.yml") + ": servers.remote.transport: \"ws\" is not a transport; use auto, http or sse",
				"  - " + filepath.Join(dir, "broken.yml") + ": servers.report.tiemout: unknown key; did you mean timeout?"}},
		{name: "client config", args: []string{"check", "-c", client}, env: map[string]string{"REPORT_API_TOKEN": "hunter2-env"}, code: 0,
			stdout: []string{"configuration: " + client, "report  (stdio, from " + client + ")",
				"env:      REPORT_API_TOKEN=${REPORT_API_TOKEN}", "OK: 1 server(s), 0 problem(s)"}},
		{name: "missing file", args: []string{"check", "-c", filepath.Join(dir, "nope.yml")}, code: exitConfig,
			stderr: []string{"nope.yml is unusable:", "no such file or directory"}},
		{name: "no subcommand", code: exitUsage, stderr: []string{"Usage:", "mcpwatch config check"}},
		{name: "help", args: []string{"check", "--help"}, code: exitOK, stdout: []string{"Usage:", "--config.file"}},
		{name: "unknown subcommand", args: []string{"lint"}, code: exitUsage, stderr: []string{`unknown subcommand "lint"`}},
		{name: "bad format", args: []string{"check", "--format", "yaml"}, code: exitUsage, stderr: []string{"--format \"yaml\": want one of text, json", "mcpwatch config check --help"}},
		{name: "output as the format, the old spelling", args: []string{"check", "-o", "json"}, code: exitUsage, stderr: []string{"--output \"json\": --output names the file to write; for the output format write --format json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runConfig(t, tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			assertContains(t, "stdout", stdout, tc.stdout...)
			assertContains(t, "stderr", stderr, tc.stderr...)
			if strings.Contains(stdout+stderr, "hunter2") {
				t.Errorf("output carries a secret:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

func TestConfigCheckJSON(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcpwatch.yml")
	writeTestFile(t, file, secretConfig)
	code, stdout, _ := runConfig(t, nil, "check", "-c", file, "--format", "json")
	if code != exitConfig { // secrets/token is absent and the variable unset
		t.Errorf("exit %d", code)
	}
	var rep struct {
		Config   string `json:"config"`
		Servers  []struct{ Name string }
		Problems []string `json:"problems"`
		OK       bool     `json:"ok"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Config != file || len(rep.Servers) != 2 || len(rep.Problems) != 2 || rep.OK {
		t.Errorf("report %+v", rep)
	}
	if strings.Contains(stdout, "hunter2") {
		t.Errorf("output carries a secret:\n%s", stdout)
	}
}

// TestConfigCheckDefault: with no -c and no mcpwatch.yml, the Python
// preflight's .mcp.json and variables are used.
func TestConfigCheckDefault(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "ci.json"), `{"mcpServers": {"report": {"command": "/bin/sh", "env": {"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}}}}`)
	t.Chdir(dir)
	env := map[string]string{"MCP_CONFIG": "ci.json", "MCP_TOOL_LOCK": "locks/tools.json", "MCP_PROBE_TIMEOUT_S": "2"}
	code, stdout, stderr := runConfig(t, env, "check")
	if code != exitConfig {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	assertContains(t, "stdout", stdout, []string{"configuration: ci.json", "lock:          " + filepath.Join(dir, "locks", "tools.json"),
		"defaults:      timeout 2s", "report  (stdio, from " + filepath.Join(dir, "ci.json") + ")",
		"env.REPORT_API_TOKEN: credential missing: ${REPORT_API_TOKEN} is not set"}...)

	env["REPORT_API_TOKEN"] = "hunter2"
	code, stdout, _ = runConfig(t, env, "check")
	if code != exitOK || strings.Contains(stdout, "hunter2") {
		t.Errorf("exit %d\n%s", code, stdout)
	}

	// An mcpwatch.yml in the directory wins.
	writeTestFile(t, filepath.Join(dir, "mcpwatch.yml"), "servers:\n  own: {command: /bin/sh}\n")
	code, stdout, _ = runConfig(t, env, "check")
	if code != exitOK || !strings.Contains(stdout, "own  (stdio") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// A schedule the daemon cannot run fails `config check` too, with the
// message serve gives: both read it with config.ParseSchedule.
func TestConfigCheckAndServeRefuseTheSameSchedules(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"@every 0s", "@every -5s"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "mcpwatch.yml")
			writeTestFile(t, file, "servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n    schedule: \""+spec+"\"\n")
			want := "servers.x.schedule: \"" + spec + "\" is not a schedule (the interval must be positive)"
			for _, args := range [][]string{{"config", "check", "-c", file}, {"serve", "-c", file}} {
				code, _, stderr := runCLI(t, nil, args...)
				if code != exitConfig || !strings.Contains(stderr, want) {
					t.Errorf("mcpwatch %s: exit %d, want %d with %q; stderr:\n%s", args[0], code, exitConfig, want, stderr)
				}
			}
		})
	}
}

// config check shows how often each canary is called where it is not its
// server's call_schedule, and why: a metered tool paced to its plan's free
// calls, a generated input hourly, a contract's own schedule, a tool
// billed from the first call held; and the calls a month in all.
func TestConfigCheckCallPlans(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcpwatch.yml")
	writeTestFile(t, file, `servers:
  brave:
    command: npx
    args: [-y, "@brave/brave-search-mcp-server"]
    calls:
      brave_web_search: {input: {query: mcpwatch}}
      brave_news_search: {input: {query: mcpwatch}, schedule: "@every 8h"}
  perplexity:
    command: npx
    args: [-y, "@perplexity-ai/mcp-server"]
    calls:
      perplexity_ask: {input: {messages: []}, expect: {status: credentialAccepted}}
`)
	// Exit 78 where npx is not installed: the plans are shown either way.
	_, stdout, _ := runConfig(t, nil, "check", "-c", file)
	for _, want := range []string{
		`paced:    brave_news_search: "@every 8h", 90 calls a month: its contract's own schedule`,
		`brave_web_search: "@every 7h27m", 96 calls a month: Brave Search API's Free plan gives 2,000 free calls a month (https://brave.com/search/api/): by default mcpwatch spends at most 5% of them, 100, one every 7h27m`,
		`calls/mo: 186 canary calls in 30 days at these schedules`,
		`held:     perplexity_ask: not called: Perplexity's API (billed per request, no free requests) bills every call of perplexity_ask`,
		`calls/mo: 0 canary calls in 30 days`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config check lacks %q:\n%s", want, stdout)
		}
	}
}

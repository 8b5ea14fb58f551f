package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One broken server must not block the preflight of the others: --skip
// leaves it out of check and lock, and its lock entry is kept.
func TestSkipABrokenServer(t *testing.T) {
	t.Parallel()
	dir := failingDir(t)
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")
	env := map[string]string{"REPORT_API_TOKEN": "test-token"}

	r := runBin(t, dir, env, "lock", "--timeout", "2s")
	if r.code != exitConfig {
		t.Fatalf("lock: want exit 78, got %s", r)
	}
	assertContains(t, "lock refusal", r.stdout, "left unchanged\n",
		"To lock the others now, leave these out: 'mcpwatch lock --skip ghost --skip stalled' (their entries are kept), or list them under ignore: in mcpwatch.yml; 'mcpwatch lock --server NAME' relocks one server alone.\n")

	r = runBin(t, dir, env, "lock", "--skip", "ghost", "--skip", "stalled")
	if r.code != exitOK {
		t.Fatalf("lock --skip: want exit 0, got %s", r)
	}
	assertContains(t, "lock --skip", r.stdout, "wrote ", "(probed 1 server in ", "  report: + list_report_dates; - old_tool\n",
		"  skipped (not probed, entries kept): ghost, stalled\n")
	want := "{\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ],\n  \"stalled\": [ \"list_report_dates\" ]\n}\n"
	if got := string(readFile(t, lockPath)); got != want {
		t.Errorf("lock:\n%s\nwant:\n%s", got, want)
	}

	r = runBin(t, dir, env, "check", "--skip", "ghost", "--skip", "stalled")
	if r.code != exitOK {
		t.Fatalf("check --skip: want exit 0, got %s", r)
	}
	assertContains(t, "check --skip", r.stdout, "MCP preflight OK in ", "(2 tools verified across 1 server)\n",
		"  skipped (not probed, --skip or ignore:): ghost, stalled\n")

	assertUsageErrors(t, dir, env, []usageCase{
		{[]string{"check", "--skip", "nope"}, `--skip: unknown server "nope"; the configuration (.mcp.json) defines: ghost, report, stalled`},
		{[]string{"lock", "--server", "report", "--skip", "report"}, "--server report and --skip report contradict each other"},
	})
}

// ignore: in mcpwatch.yml does what --skip does, for every run; --server
// names an ignored server to probe it anyway.
func TestIgnoreInMcpwatchYml(t *testing.T) {
	t.Parallel()
	dir := failingDir(t)
	yml := "imports: [.mcp.json]\nignore: [ghost, stalled]\n"
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REPORT_API_TOKEN": "test-token"}
	if r := runBin(t, dir, env, "lock"); r.code != exitOK || !strings.Contains(r.stdout, "skipped (not probed, entries kept): ghost, stalled") {
		t.Fatalf("lock with ignore: %s", r)
	}
	if got := string(readFile(t, filepath.Join(dir, "mcp-tools.lock.json"))); !strings.Contains(got, `"stalled": [ "list_report_dates" ]`) {
		t.Errorf("the ignored server's entry changed:\n%s", got)
	}
	r := runBin(t, dir, env, "check", "--format", "json")
	var rep struct {
		OK      bool     `json:"ok"`
		Skipped []string `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitOK || !rep.OK || strings.Join(rep.Skipped, ",") != "ghost,stalled" {
		t.Fatalf("check with ignore: %v %+v\n%s", err, rep, r)
	}
	// Asked for by name, an ignored server is probed.
	r = runBin(t, dir, env, "check", "--server", "ghost")
	if r.code != exitConfig {
		t.Fatalf("check --server ghost: want exit 78, got %s", r)
	}
	assertContains(t, "check --server ghost", r.stdout, "  - ghost: probe failed (spawn_failed)")
	if r := runBin(t, dir, env, "config", "check"); !strings.Contains(r.stdout, "ignored:       ghost, stalled (not probed)") {
		t.Errorf("config check does not list the ignored servers: %s", r)
	}
}

// A configured server with no lock entry says how to lock it.
func TestCheckNotLockedYet(t *testing.T) {
	t.Parallel()
	dir := seedDir(t)
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": reportEntry(t), "newcomer": reportEntry(t)}))
	r := runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "test-token"}, "check", "--strict")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "check", r.stdout, "  - newcomer: not locked yet (2 tools seen): run 'mcpwatch lock --server newcomer'\n")
}

// --format and --output mean the format and the file in every command.
func TestFormatAndOutputEverywhere(t *testing.T) {
	t.Parallel()
	dir := seedDir(t)
	env := map[string]string{"REPORT_API_TOKEN": "test-token"}
	out := func(name string) string { return filepath.Join(dir, name) }
	runs := []struct {
		args   []string
		file   string
		inFile string // a part of the file
		stdout string // a part of stdout
	}{
		{[]string{"probe", "--format", "json", "--output", out("probe.json"), "--env", "REPORT_API_TOKEN=x", "--", reportserverBin(t)}, "probe.json", `"ok": true`, "ok: "},
		{[]string{"config", "check", "--format", "json", "-o", out("config.json")}, "config.json", `"ok": true`, "OK: 1 server(s)"},
		{[]string{"lock", "--format", "json", "--output", out("lock.json")}, "lock.json", `"outcome": "unchanged"`, ": no change ("},
		{[]string{"check", "--format", "json", "--output", out("check.json")}, "check.json", `"ok": true`, "MCP preflight OK"},
		{[]string{"lock", "--output", out("lock.txt")}, "lock.txt", ": no change (", ""},
	}
	for _, run := range runs {
		r := runBin(t, dir, env, run.args...)
		if r.code != exitOK {
			t.Errorf("%v: %s", run.args, r)
			continue
		}
		assertContains(t, strings.Join(run.args, " ")+": the file", string(readFile(t, out(run.file))), run.inFile)
		assertContains(t, strings.Join(run.args, " ")+": stdout", r.stdout, run.stdout)
	}
	for _, args := range [][]string{{"lock", "-o", "json"}, {"check", "--output", "junit"}, {"probe", "-o", "json", "--", "x"}} {
		r := runBin(t, dir, env, args...)
		if r.code != exitUsage {
			t.Errorf("%v: want exit 2, got %s", args, r)
		}
		assertContains(t, strings.Join(args, " "), r.stderr, "--output names the file to write; for the output format write --format")
	}
}

func TestVersionHelp(t *testing.T) {
	t.Parallel()
	r := runBin(t, t.TempDir(), nil, "version", "--help")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage:\n  mcpwatch version") {
		t.Errorf("version --help: %s", r)
	}
	if r := runBin(t, t.TempDir(), nil, "version", "extra"); r.code != exitUsage {
		t.Errorf("version extra: want exit 2, got %s", r)
	}
}

// serve with no --config.file reads what the other commands read, and
// without one says what to write, in words that hold outside this repo.
func TestServeDefaultConfig(t *testing.T) {
	t.Parallel()
	r := runBin(t, t.TempDir(), nil, "serve", "--web.listen-address", "127.0.0.1:0")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "serve", r.stderr, "no mcpwatch.yml and no .mcp.json in ", "A small mcpwatch.yml:", "servers:")
	if strings.Contains(r.stderr, "examples/") {
		t.Errorf("the hint names a path of the source tree:\n%s", r.stderr)
	}

	dir := t.TempDir()
	config := writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": tokenGatedServer("example-token")}))
	lock := writeJSON(t, dir, "tools.lock", map[string]any{"report": []string{"fetch_daily_report", "list_report_dates"}})
	base := serveInProcess(t, map[string]string{"MCP_CONFIG": config, "MCP_TOOL_LOCK": lock})
	if st := firstProbe(t, base, "report"); st.State != "ok" {
		t.Errorf("report is %s (%s: %s), want ok", st.State, st.Reason, st.Error)
	}
}

// The daemon does not probe an ignored server.
func TestServeIgnores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "mcpwatch.yml")
	data, _ := json.Marshal(map[string]any{"ignore": []string{"broken"}, "servers": map[string]any{
		"report": tokenGatedServer("example-token"),
		"broken": map[string]any{"command": "/nonexistent/no-such-binary"},
	}})
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	base := serveInProcess(t, nil, "-c", config)
	firstProbe(t, base, "report")
	var list struct {
		Servers []struct {
			Name string `json:"name"`
		} `json:"servers"`
	}
	body := scrape(t, base+"/api/v1/servers")
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Servers) != 1 || list.Servers[0].Name != "report" {
		t.Errorf("servers %+v (%v), want report alone:\n%s", list, err, body)
	}
}

// A .mcp.json that Claude Code would reject does not pass config check:
// a trailing comma is placed at FILE:LINE:COL, a misspelt key gets a
// did-you-mean.
func TestConfigCheckIsAsStrictAsTheClient(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, content, want string }{
		{"trailing comma", "{\n  \"mcpServers\": {\n    \"report\": {\"command\": \"./report\"},\n  }\n}\n",
			".mcp.json:3:38: a trailing comma before }"},
		{"misspelt key", `{"mcpServers": {"report": {"comand": "./report"}}}`,
			".mcp.json: mcpServers.report.comand: unknown key; did you mean command?"},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runBin(t, dir, nil, "config", "check")
		if r.code != exitConfig {
			t.Errorf("%s: want exit 78, got %s", tc.name, r)
			continue
		}
		assertContains(t, tc.name, r.stderr, filepath.Join(dir, tc.want))
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestInitUsage(t *testing.T) {
	t.Parallel()
	r := runBin(t, t.TempDir(), nil, "init", "--help")
	if r.code != exitOK {
		t.Fatalf("--help: %s", r)
	}
	assertContains(t, "init --help", r.stdout, "Usage:\n  mcpwatch init", "mcp-contracts/NAME.tools.json", "it only adds", "Exit codes: 0", "--timeout")
	for _, args := range [][]string{{"init", "extra"}, {"init", "--timeout", "0s"}, {"init", "--nope"}} {
		if r := runBin(t, t.TempDir(), nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "mcpwatch init --help") {
			t.Errorf("%v: %s", args, r)
		}
	}
	// No configuration: 78, saying what was looked for.
	if r := runBin(t, t.TempDir(), nil, "init"); r.code != exitConfig || !strings.Contains(r.stderr, ".mcp.json") {
		t.Errorf("no configuration: %s", r)
	}
}

// What a server sends reaches the terminal escaped: a tool name with an
// escape sequence, in the table and the file list.
func TestInitEscapesWhatServersSend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evil := probetest.Tool{Name: "list_\x1b[2Jthings", InputSchema: map[string]any{"type": "object"}, Annotations: probetest.ReadOnly()}
	path, args, env := probetest.Command(probetest.Config{Tools: []probetest.Tool{evil}})
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"evil": map[string]any{"command": path, "args": args, "env": env}}))
	r := runBin(t, dir, nil, "init")
	if r.code != exitOK || strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, `list_\x1b[2Jthings`) {
		t.Errorf("%s", r)
	}
}

// init on the seven pinned npm servers, the credentialed ones against
// stand-ins of their APIs with good fake credentials: every server probed
// and locked, a starter file for each, the table says which canary watches
// what, no API sees a write, and check then passes on what init wrote.
// Run again after an edit, init keeps it.
func TestInitPinnedServers(t *testing.T) {
	t.Parallel()
	servers := map[string]string{}
	for _, pkg := range []string{peertest.EverythingServer, peertest.MemoryServer, peertest.FilesystemServer,
		peertest.GitHubServer, peertest.SlackServer, peertest.BraveServer, peertest.PostgresServer} {
		node, script := peertest.Server(t, pkg)
		servers[pkg] = script
		servers["node"] = node
	}
	const ghToken, slackToken, braveKey = "ghp_initToken000000000000000000000000", "xoxb-init-0000-0000", "BSAinitKey00000000000"
	gh, sl, br := peertest.NewGitHub(ghToken), peertest.NewSlack(slackToken), peertest.NewBrave(braveKey)
	defer gh.Close()
	defer sl.Close()
	defer br.Close()
	pg, err := peertest.NewPostgres("mcp", "pg-pass")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	node := servers["node"]
	withUpstreams := func(env map[string]string) map[string]string {
		for k, v := range peertest.NodeEnv(gh, sl, br) {
			env[k] = v
		}
		return env
	}
	entry := func(pkg string, env map[string]string, args ...string) map[string]any {
		return map[string]any{"command": node, "args": append([]string{servers[pkg]}, args...), "env": withUpstreams(env)}
	}
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"everything": entry(peertest.EverythingServer, map[string]string{}),
		"memory":     entry(peertest.MemoryServer, map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.json")}),
		"filesystem": entry(peertest.FilesystemServer, map[string]string{}, data),
		"github":     entry(peertest.GitHubServer, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}),
		"slack":      entry(peertest.SlackServer, map[string]string{"SLACK_BOT_TOKEN": "${SLACK_BOT_TOKEN}", "SLACK_TEAM_ID": "T0123ABCDEF"}),
		"brave":      entry(peertest.BraveServer, map[string]string{"BRAVE_API_KEY": "${BRAVE_API_KEY}"}),
		"postgres":   entry(peertest.PostgresServer, map[string]string{}, pg.URL("mcp", "pg-pass")),
	}))
	env := map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": ghToken, "SLACK_BOT_TOKEN": slackToken, "BRAVE_API_KEY": braveKey}

	// Seven node processes start at once: on a loaded machine one may take
	// longer than the default 10s to answer. The deadline is a guard, not a
	// timing claim.
	const guard = "--timeout=2m"
	r := runBin(t, dir, env, "init", guard)
	if r.code != exitOK {
		t.Fatalf("init: %s", r)
	}
	t.Logf("mcpwatch init:\n%s", r.stdout)
	// The credentialed servers get the catalogue's vetted canaries (they
	// run from node_modules, which names the package); the others what
	// their annotations allow, with inputs generated where needed.
	assertContains(t, "init", r.stdout,
		"probed 7 servers", "lock mcp-tools.lock.json: added brave, everything, filesystem, github, memory, postgres, slack",
		"brave: wrote mcp-contracts/brave.tools.json (1 enabled, 1 proposed, disabled; brave_web_search from the catalogue's entry server-brave-search)",
		"github: wrote mcp-contracts/github.tools.json (1 enabled, ", "proposed, disabled; search_repositories from the catalogue's entry server-github)",
		"memory: wrote mcp-contracts/memory.tools.json (1 enabled, 2 proposed, disabled)",
		"postgres: wrote mcp-contracts/postgres.tools.json (1 enabled; query from the catalogue's entry server-postgres)",
		"slack: wrote mcp-contracts/slack.tools.json (1 enabled, 4 proposed, disabled; slack_list_channels from the catalogue's entry server-slack)")
	for _, row := range []string{
		"brave_web_search (vetted: the catalogue's entry server-brave-search) watches env:BRAVE_API_KEY",
		"search_repositories (vetted: the catalogue's entry server-github) watches env:GITHUB_PERSONAL_ACCESS_TOKEN",
		"memory", "read_graph", "given no credential",
		"slack_list_channels (vetted: the catalogue's entry server-slack) watches env:SLACK_BOT_TOKEN",
		"query (vetted: the catalogue's entry server-postgres) watches arg:userinfo",
	} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("the table lacks %q", row)
		}
	}
	for _, a := range []*peertest.API{gh, sl, br} {
		if a.Writes() != 0 {
			t.Errorf("init sent %s %d requests that write", a.Name, a.Writes())
		}
	}
	for _, secret := range []string{ghToken, slackToken, braveKey, "pg-pass"} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("a credential's value in the output")
		}
	}
	ghFile := filepath.Join(dir, "mcp-contracts", "github.tools.json")
	raw, err := os.ReadFile(ghFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := contracts.ParseFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range f.Tools {
		if vetted := name == "search_repositories"; vetted == c.Disabled || strings.HasPrefix(name, "create_") || strings.HasPrefix(name, "push_") || strings.HasPrefix(name, "merge_") {
			t.Errorf("github's %s: %+v: the vetted canary enabled, every proposal disabled, and no write proposed", name, c)
		}
	}

	if slack, _ := os.ReadFile(filepath.Join(dir, "mcp-contracts", "slack.tools.json")); !strings.Contains(string(slack), `"slack_list_channels": {`) {
		t.Errorf("slack's file proposes no slack_list_channels:\n%s", slack)
	}

	// check --strict passes on what init wrote, calling the enabled
	// canaries, the vetted ones among them.
	if c := runBin(t, dir, env, "check", "--strict", guard); c.code != exitOK || !strings.Contains(c.stdout, "calls passed") {
		t.Errorf("check --strict after init: %s", c)
	}

	// A person gives GitHub's vetted search_repositories a query of their
	// own; init run again keeps it and the lock as they are.
	edited := strings.Replace(string(raw), `"input": {"perPage": 1, "query": "mcpwatch"}`, `"input": {"perPage": 1, "query": "mcp"}`, 1)
	if edited == string(raw) {
		t.Fatalf("no vetted input for search_repositories in:\n%s", raw)
	}
	if err := os.WriteFile(ghFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, _ := os.ReadFile(filepath.Join(dir, "mcp-tools.lock.json"))
	again := runBin(t, dir, env, "init", guard)
	if again.code != exitOK {
		t.Fatalf("init again: %s", again)
	}
	t.Logf("mcpwatch init, again:\n%s", again.stdout)
	assertContains(t, "init again", again.stdout, "lock mcp-tools.lock.json: unchanged",
		"github: nothing new for mcp-contracts/github.tools.json", "edits included: search_repositories")
	if now, _ := os.ReadFile(ghFile); string(now) != edited {
		t.Error("the edited file changed")
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "mcp-tools.lock.json")); string(now) != string(lock) {
		t.Error("the lock changed")
	}
}

// The path init's comments describe, end to end, without the catalogue:
// Slack's proposal enabled by removing "disabled" and giving its opt-in in
// an mcpwatch.yml that imports the .mcp.json; check then calls it, and a
// revoked token fails the check as a rejected credential.
func TestInitProposalEnabled(t *testing.T) {
	t.Parallel()
	node, script := peertest.Server(t, peertest.SlackServer)
	const token = "xoxb-enable-0000-0000"
	sl := peertest.NewSlack(token)
	defer sl.Close()
	dir := t.TempDir()
	env := peertest.NodeEnv(sl)
	env["SLACK_BOT_TOKEN"], env["SLACK_TEAM_ID"] = "${SLACK_BOT_TOKEN}", "T0123ABCDEF"
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"slack": map[string]any{"command": node, "args": []string{script}, "env": env}}))
	vars := map[string]string{"SLACK_BOT_TOKEN": token}
	if r := runBin(t, dir, vars, "init", "--timeout=2m", "--no-catalogue"); r.code != exitOK {
		t.Fatalf("init: %s", r)
	}
	file := filepath.Join(dir, "mcp-contracts", "slack.tools.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Remove "disabled" from slack_list_channels' entry, the first.
	i := strings.Index(string(raw), `"slack_list_channels": {`)
	j := strings.Index(string(raw), `"disabled": true,`)
	if i < 0 || j < i {
		t.Fatalf("no disabled slack_list_channels first in:\n%s", raw)
	}
	enabled := string(raw[:j]) + strings.TrimLeft(string(raw[j+len(`"disabled": true,`):]), " \n")
	if err := os.WriteFile(file, []byte(enabled), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte("imports: [.mcp.json]\nservers:\n  slack: {allow_destructive_calls: [slack_list_channels]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, vars, "check", "--timeout=2m"); r.code != exitOK || !strings.Contains(r.stdout, "1 of 1 call passed") {
		t.Fatalf("check with the proposal enabled: %s", r)
	}
	sl.Revoke(token)
	r := runBin(t, dir, vars, "check", "--timeout=2m")
	if r.code != exitConfig || !strings.Contains(r.stdout, "slack_list_channels") || !strings.Contains(r.stdout, "SLACK_BOT_TOKEN") {
		t.Errorf("check with the token revoked: %s", r)
	}
	t.Logf("check with the token revoked:\n%s", r.stdout)
	if sl.Writes() != 0 {
		t.Errorf("%d writes reached Slack", sl.Writes())
	}
}

// What init writes passes 'mcpwatch check --strict' as it is: on a
// .mcp.json of server-memory, server-filesystem and server-everything, no
// contract is left waiting for a "<fill in ...>" value (an input is
// generated from the tool's schema, or the contract is written disabled),
// so the gate a team copies from the docs holds on the first run.
func TestInitThenStrictCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{}
	for name, pkg := range map[string]string{"memory": peertest.MemoryServer, "filesystem": peertest.FilesystemServer, "everything": peertest.EverythingServer} {
		node, script := peertest.Server(t, pkg)
		args := []string{script}
		env := map[string]string{}
		switch name {
		case "filesystem":
			args = append(args, data)
		case "memory":
			env["MEMORY_FILE_PATH"] = filepath.Join(dir, "memory.json")
		}
		servers[name] = map[string]any{"command": node, "args": args, "env": env}
	}
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(servers))
	// Three node processes at once on a loaded machine: the deadline is a
	// guard, not a timing claim.
	const guard = "--timeout=2m"
	r := runBin(t, dir, nil, "init", guard)
	if r.code != exitOK {
		t.Fatalf("init: %s", r)
	}
	t.Logf("mcpwatch init:\n%s", r.stdout)
	c := runBin(t, dir, nil, "check", "--strict", guard)
	t.Logf("mcpwatch check --strict:\n%s", c.stdout)
	if c.code != exitOK || strings.Contains(c.stdout, "<fill in") {
		t.Errorf("check --strict on what init wrote: %s", c)
	}
	// everything's own canaries need no input; memory's and filesystem's
	// tools that need input are written with generated inputs, disabled
	// beside the canary each has already.
	raw, err := os.ReadFile(filepath.Join(dir, "mcp-contracts", "memory.tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := contracts.ParseFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tools["search_nodes"]; !c.Disabled || c.Pending() || c.Expect.Status != contracts.StatusCredentialAccepted {
		t.Errorf("memory's search_nodes: %+v", c)
	}
}

// A server whose only read-only tool needs input: init generates one from
// its schema and enables it, as nothing else would watch the credential;
// check calls it, and it passes while the credential is accepted and
// fails, naming the credential, once the tool answers that it was revoked.
func TestInitGeneratedInput(t *testing.T) {
	t.Parallel()
	var fetch probetest.Tool
	for _, tl := range probetest.DefaultTools() {
		if tl.Name == "fetch_daily_report" {
			fetch = tl
		}
	}
	if fetch.Name == "" {
		t.Fatal("probetest has no fetch_daily_report")
	}
	for _, tc := range []struct {
		name     string
		behavior probetest.Behavior
		code     int
		want     string
	}{
		{"accepted", "", exitOK, "1 of 1 call passed"},
		{"revoked", probetest.CallIsError, exitConfig, "credential_rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path, args, env := probetest.Command(probetest.Config{Tools: []probetest.Tool{fetch}})
			env["REPORT_API_TOKEN"] = "${REPORT_API_TOKEN}"
			writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": map[string]any{"command": path, "args": args, "env": env}}))
			vars := map[string]string{"REPORT_API_TOKEN": "report-token-0000"}
			r := runBin(t, dir, vars, "init")
			if r.code != exitOK || !strings.Contains(r.stdout, "report: wrote mcp-contracts/report.tools.json (1 enabled)") ||
				!strings.Contains(r.stdout, "fetch_daily_report (its contract) watches env:REPORT_API_TOKEN") {
				t.Fatalf("init: %s", r)
			}
			raw, _ := os.ReadFile(filepath.Join(dir, "mcp-contracts", "report.tools.json"))
			if !strings.Contains(string(raw), `"input": {"date": "mcpwatch"}`) || !strings.Contains(string(raw), `"status": "credentialAccepted"`) {
				t.Fatalf("no generated input:\n%s", raw)
			}
			if tc.behavior != "" {
				// The same server, now answering its calls as a service
				// that revoked the token would.
				path, args, env = probetest.Command(probetest.Config{Tools: []probetest.Tool{fetch}, Behavior: tc.behavior})
				env["REPORT_API_TOKEN"] = "${REPORT_API_TOKEN}"
				writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": map[string]any{"command": path, "args": args, "env": env}}))
			}
			c := runBin(t, dir, vars, "check", "--strict")
			if c.code != tc.code || !strings.Contains(c.stdout, tc.want) {
				t.Errorf("check --strict: %s", c)
			}
			if tc.code != exitOK && !strings.Contains(c.stdout, "REPORT_API_TOKEN") {
				t.Errorf("the failure does not name the credential: %s", c)
			}
		})
	}
}

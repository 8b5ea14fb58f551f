package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/discover/discovertest"
)

func TestDiscoverFixtureHome(t *testing.T) {
	home := discovertest.Home(t)
	env := map[string]string{"HOME": home}
	project := filepath.Join(home, "work", "app")

	code, out, errOut := runCLI(t, env, "discover", "--project", project)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	assertContains(t, "text", out,
		"14 client config file(s):",
		"claude-code    user    "+filepath.Join(home, ".claude.json")+": 3 server(s)",
		"\ngithub  (stdio)\n",
		"  command:  npx -y @modelcontextprotocol/server-github\n",
		"  from:     claude-code user "+filepath.Join(home, ".claude.json")+" (mcpServers.github)\n",
		"            claude-desktop user "+filepath.Join(home, ".config/Claude/claude_desktop_config.json")+" (mcpServers.gh) as gh\n",
		"17 server(s) in 14 file(s), 0 problem(s)")
	if strings.Contains(out, "ghp_desktopLiteralSecret") || strings.Contains(out, "us-east-1") {
		t.Errorf("a secret value is printed:\n%s", out)
	}

	code, out, _ = runCLI(t, env, "discover", "--project", project, "--format", "json", "--client", "codex", "--client", "gemini")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var rep struct {
		Servers []struct {
			Name      string            `json:"name"`
			Transport string            `json:"transport"`
			Headers   map[string]string `json:"headers"`
			Origins   []struct{ Client, Scope, Key string }
		}
		OK bool
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range rep.Servers {
		got[s.Name] = s.Transport + " " + s.Origins[0].Client + " " + s.Origins[0].Scope + " " + s.Origins[0].Key
	}
	want := map[string]string{
		"app-report":  "stdio codex project mcp_servers.app-report",
		"app-search":  "sse gemini project mcpServers.app-search",
		"context7":    "stdio codex user mcp_servers.context7",
		"figma":       "http codex user mcp_servers.figma",
		"httpServer":  "http gemini user mcpServers.httpServer",
		"pythonTools": "stdio gemini user mcpServers.pythonTools",
	}
	if !reflect.DeepEqual(got, want) || !rep.OK {
		t.Errorf("servers:\n got: %v\nwant: %v (ok %v)", got, want, rep.OK)
	}
}

func TestDiscoverProblems(t *testing.T) {
	home := t.TempDir()
	writeTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"both": {"command": "x", "url": "https://x.example.com/mcp"}, "ok": {"command": "y"}}}`)
	writeTestFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"mcpServers": `)
	code, out, _ := runCLI(t, map[string]string{"HOME": home}, "discover", "--project", home)
	if code != exitConfig {
		t.Fatalf("exit %d, want 78\n%s", code, out)
	}
	assertContains(t, "text", out,
		"gemini         user    "+filepath.Join(home, ".gemini/settings.json")+": unreadable",
		"not valid JSON",
		"\nboth  (unusable)\n  problem:  "+filepath.Join(home, ".cursor/mcp.json")+": mcpServers.both: both command and url are set",
		"\nok  (stdio)\n",
		"2 server(s) in 2 file(s), 2 problem(s)")

	assertUsageErrors(t, home, nil, []usageCase{
		{[]string{"discover", "--client", "emacs"}, `--client "emacs" is not a client discover knows; use one of: claude-code, claude-desktop, cursor, vscode, windsurf, codex, gemini`},
		{[]string{"discover", "extra"}, `unexpected argument "extra"`},
	})
}

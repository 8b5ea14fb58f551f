package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/discover/discovertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestLoadClientConfig(t *testing.T) {
	td, _ := filepath.Abs("testdata/clients")
	lookup := mapLookup(map[string]string{
		"REPORT_API_TOKEN":             "rep-1",
		"MCPWATCH_INPUT_API_KEY":       "pplx-1",
		"MCPWATCH_INPUT_GH_TOKEN":      "gh-1",
		"DOCS_KEY":                     "docs-1",
		"DATABASE_URL":                 "postgres://db",
		"HOME":                         "/home/u",
		"MCPWATCH_TEST_UNUSED_EXAMPLE": "",
	})
	writeFile(t, filepath.Join(td, "vscode", ".env"), "# the server's own variables\nexport PERPLEXITY_MODEL=\"sonar\"\nPERPLEXITY_API_KEY=from-env-file\n")
	t.Cleanup(func() { _ = removeFile(filepath.Join(td, "vscode", ".env")) })

	cases := []struct {
		name    string
		file    string
		targets map[string]probe.Target
	}{
		{"claude code", "claude-code/.mcp.json", map[string]probe.Target{
			"report-cc": {Command: "python3", Args: []string{"./report_server.py"},
				Env: map[string]string{"REPORT_API_TOKEN": "rep-1"}, Dir: filepath.Join(td, "claude-code"),
				Transport: probe.TransportStdio, Era: probe.EraAuto},
			"report-remote": {URL: "https://reports.example.com/mcp", Transport: probe.TransportHTTP,
				Headers: map[string]string{"Authorization": "Bearer rep-1"}, Era: probe.EraAuto},
			"legacy-events": {URL: "https://events.example.com/sse", Transport: probe.TransportSSE, Era: probe.EraAuto},
		}},
		{"claude desktop", "desktop/claude_desktop_config.json", map[string]probe.Target{
			"filesystem": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"},
				Dir: filepath.Join(td, "desktop"), Transport: probe.TransportStdio, Era: probe.EraAuto},
			"github": {Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktopLiteralSecret1234567890"},
				Dir: filepath.Join(td, "desktop"), Transport: probe.TransportStdio, Era: probe.EraAuto},
			// old-server is disabled: not watched.
		}},
		{"vs code", "vscode/.vscode/mcp.json", map[string]probe.Target{
			"perplexity": {Command: "npx", Args: []string{"-y", "server-perplexity-ask"},
				// env wins over envFile
				Env: map[string]string{"PERPLEXITY_API_KEY": "pplx-1", "PERPLEXITY_MODEL": "sonar"},
				Dir: filepath.Join(td, "vscode"), Transport: probe.TransportStdio, Era: probe.EraAuto},
			"github": {URL: "https://api.githubcopilot.com/mcp/", Transport: probe.TransportHTTP,
				Headers: map[string]string{"Authorization": "Bearer gh-1"}, Era: probe.EraAuto},
			"local-tools": {Command: filepath.Join(td, "vscode", "bin", "tools"), Args: []string{"--root", filepath.Join(td, "vscode")},
				Dir: filepath.Join(td, "vscode", "work"), Transport: probe.TransportStdio, Era: probe.EraAuto},
			"experimental": {Command: "node", Args: []string{"experimental.js"},
				Dir: filepath.Join(td, "vscode"), Transport: probe.TransportStdio, Era: probe.EraAuto},
		}},
		{"vs code settings", "vscode-settings/settings.json", map[string]probe.Target{
			"time": {Command: "uvx", Args: []string{"mcp-server-time", "--local-timezone=Europe/Paris"},
				Dir: filepath.Join(td, "vscode-settings"), Transport: probe.TransportStdio, Era: probe.EraAuto},
		}},
		{"cursor", "cursor/.cursor/mcp.json", map[string]probe.Target{
			"docs": {URL: "https://docs.example.com/mcp", Transport: probe.TransportAuto,
				Headers: map[string]string{"X-API-Key": "docs-1"}, Era: probe.EraAuto},
			"db": {Command: filepath.Join(td, "cursor", "scripts", "db-mcp.sh"), Args: []string{"--dsn", "postgres://db"},
				Env: map[string]string{"LOG_LEVEL": "info"}, Dir: filepath.Join(td, "cursor"),
				Transport: probe.TransportStdio, Era: probe.EraAuto},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := readClientConfig(filepath.Join("testdata/clients", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]probe.Target{}
			for _, s := range servers {
				if s.Source != filepath.Join(td, tc.file) || s.Timeout != BuiltinDefaults().Timeout || s.Schedule != BuiltinDefaults().Schedule {
					t.Errorf("%s: Source=%s Timeout=%s Schedule=%s", s.Name, s.Source, s.Timeout, s.Schedule)
				}
				target, _, err := s.Resolve(lookup)
				if err != nil {
					t.Fatalf("%s: %v", s.Name, err)
				}
				got[s.Name] = target
			}
			if !reflect.DeepEqual(got, tc.targets) {
				t.Errorf("targets\n got: %+v\nwant: %+v", got, tc.targets)
			}
		})
	}
}

func TestLoadClientConfigErrors(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"empty", "", "is empty; it needs a JSON object such as {\"mcpServers\": {...}}"},
		{"not json", "mcpServers:\n  x: {}\n", "1:1: not valid JSON: invalid character looking for beginning of value"},
		{"truncated", `{"mcpServers": {"a": {"command": "x"`, "1:36: not valid JSON: unexpected end of JSON input"},
		{"trailing comma", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n}}", "2:24: a trailing comma before }, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove the comma"},
		{"comment", "{\"mcpServers\": {\n  // the report server\n  \"a\": {\"command\": \"x\"}}}", "2:3: a comment, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove it"},
		{"misspelt key", `{"mcpServers": {"a": {"comand": "x", "args": ["y"]}}}`,
			"mcpServers.a.comand: unknown key; did you mean command? (known keys here: args, command, cwd, disabled, env, envFile, headers, type, url)" +
				"\nFILE: mcpServers.a: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server)"},
		{"misspelt env", `{"mcpServers": {"a": {"command": "x", "evn": {"TOKEN": "t"}}}}`,
			"mcpServers.a.evn: unknown key; did you mean env? (known keys here: args, command, cwd, disabled, env, envFile, headers, type, url)"},
		{"misspelt mcpServers", `{"mcpServer": {"a": {"command": "x"}}}`, `holds no mcpServers or servers; "mcpServer": did you mean mcpServers?`},
		{"top level list", `[{"mcpServers": {}}]`, "the top level must be a JSON object such as {\"mcpServers\": {...}}"},
		{"servers not an object", `{"mcpServers": ["a"]}`, "mcpServers: expected a mapping, got a list"},
		{"env not strings", `{"mcpServers": {"a": {"command": "x", "env": {"PORT": 8080}}}}`, "mcpServers.a.env.PORT: expected a string, got a number; quote the value"},
		{"stdio with url", `{"mcpServers": {"a": {"type": "stdio", "command": "x", "url": "https://x.example.com"}}}`,
			"mcpServers.a: both command and url are set; a server is either a process mcpwatch starts (command) or a remote server (url): keep one\n" +
				"FILE: mcpServers.a.type: stdio is for command servers; use http, sse or auto with a url"},
		{"http without url", `{"servers": {"a": {"type": "http", "command": "x"}}}`, "servers.a.type: is http but the server has no url; add one, or use stdio for a command"},
		{"bad reference", `{"mcpServers": {"a": {"command": "x", "args": ["${file:}"]}}}`, "mcpServers.a.args[0]: bad reference at byte 0: ${file:} needs a path (write $$ for a literal $)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".mcp.json")
			writeFile(t, path, tc.content)
			_, err := readClientConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			want := path + ": " + strings.ReplaceAll(tc.want, "FILE", path)
			if tc.want[0] >= '0' && tc.want[0] <= '9' {
				want = path + ":" + tc.want // FILE:LINE:COL
			}
			if err.Error() != want {
				t.Errorf("message\n got: %s\nwant: %s", err, want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.File != path {
				t.Errorf("not a *FieldError naming the file: %#v", err)
			}
		})
	}
}

func TestParseEnvFile(t *testing.T) {
	env, err := parseEnvFile([]byte("# c\n\nA=1\nexport B = 'two words'\nC=\"x=y\"\nD=\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "two words", "C": "x=y", "D": ""}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("got %q", env)
	}
	_, err = parseEnvFile([]byte("A=1\nsecret-without-equals\n"))
	if err == nil || err.Error() != "line 2 is not KEY=VALUE" {
		t.Errorf("got %v", err)
	}
}

// readClientConfig reads a client config's servers as an import does, with
// the built-in defaults.
func readClientConfig(path string) ([]Server, error) {
	servers, err := loadClientConfig(clientFiles{}, path, nil)
	for i := range servers {
		servers[i] = servers[i].Normalized(Defaults{})
	}
	return servers, err
}

// One client config file, imported by path or found by discover: one
// decoder, one meaning. Each file the host fixture holds is imported by
// path, and each server read the same as discovery read it.
func TestClientFileOneDecoder(t *testing.T) {
	home := discovertest.Home(t)
	res := discover.Find(discover.Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config"),
		Projects: []string{filepath.Join(home, "work", "app")}})
	checked := 0
	for _, srv := range res.Servers {
		o := srv.Origins[0]
		found, err := DecodeEntry(Entry{File: o.File, Key: KeyPath(o.Key...), Name: srv.Name, Project: o.Project, Spec: o.Spec})
		if filepath.Base(o.File) == ".claude.json" || err != nil {
			continue // ~/.claude.json is Claude Code's own store, not a file to import
		}
		servers, err := loadClientConfig(clientFiles{}, o.File, nil)
		if err != nil {
			t.Errorf("%s: imported by path: %v", o.File, err)
			continue
		}
		var byPath *Server
		for i := range servers {
			if servers[i].Name == o.Name {
				byPath = &servers[i]
			}
		}
		if byPath == nil {
			t.Errorf("%s: %s found by discover, missing when imported by path", o.File, o.Name)
			continue
		}
		a, b := byPath.Normalized(BuiltinDefaults()), found.Normalized(BuiltinDefaults())
		if a.Command != b.Command || !reflect.DeepEqual(a.Args, b.Args) || a.URL != b.URL || a.Transport != b.Transport ||
			!reflect.DeepEqual(a.Env, b.Env) || !reflect.DeepEqual(a.Headers, b.Headers) || a.Dir != b.Dir {
			t.Errorf("%s: %s by path:\n%+v\nby discover:\n%+v", o.File, o.Name, a, b)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("compared %d servers, want the fixture's", checked)
	}
}

// The three ways the two decoders disagreed, each now read as its client
// reads it when imported by path.
func TestClientFileByPathAsItsClient(t *testing.T) {
	dir := t.TempDir()
	gemini := filepath.Join(dir, ".gemini", "settings.json")
	writeFile(t, gemini, `{"mcpServers": {
		"remote": {"httpUrl": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer $MY_KEY"}},
		"local": {"command": "srv", "env": {"KEY": "$MY_KEY"}}}}`)
	servers, err := loadClientConfig(clientFiles{}, gemini, nil)
	if err != nil {
		t.Fatalf("a Gemini CLI file with httpUrl: %v", err)
	}
	lookup := mapLookup(map[string]string{"MY_KEY": "k-1"})
	for _, s := range servers {
		tgt, _, err := s.Normalized(BuiltinDefaults()).Resolve(lookup)
		switch {
		case err != nil:
			t.Errorf("%s: %v", s.Name, err)
		case s.Name == "remote" && (tgt.URL != "https://mcp.example.com/mcp" || tgt.Transport != probe.TransportHTTP || tgt.Headers["Authorization"] != "Bearer k-1"):
			t.Errorf("remote: %+v; want streamable HTTP with $MY_KEY expanded", tgt)
		case s.Name == "local" && tgt.Env["KEY"] != "k-1":
			t.Errorf("local: KEY=%q; Gemini CLI expands $MY_KEY", tgt.Env["KEY"])
		}
	}
	if len(servers) != 2 {
		t.Errorf("%d servers, want 2", len(servers))
	}

	windsurf := filepath.Join(dir, ".codeium", "windsurf", "mcp_config.json")
	writeFile(t, windsurf, `{
		// Windsurf reads comments
		"mcpServers": {"linear": {"serverUrl": "https://mcp.linear.app/sse"}}}`)
	servers, err = loadClientConfig(clientFiles{}, windsurf, nil)
	if err != nil || len(servers) != 1 || servers[0].URL != "https://mcp.linear.app/sse" {
		t.Errorf("a Windsurf file with a comment and serverUrl: %+v, %v", servers, err)
	}
}

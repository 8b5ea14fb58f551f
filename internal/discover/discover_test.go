package discover

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/discover/discovertest"
)

// recorder watches every path discovery reads.
type recorder struct {
	mu    sync.Mutex
	paths []string
}

func (r *recorder) host(h Host) Host {
	h.ReadFile = func(p string) ([]byte, error) {
		r.add(p)
		return readBounded(p)
	}
	h.ReadDir = func(p string) ([]fs.DirEntry, error) {
		r.add(p + "/")
		return os.ReadDir(p)
	}
	return h
}

func (r *recorder) add(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, p)
}

func summary(t *testing.T, home string, res Result) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, s := range res.Servers {
		for _, o := range s.Origins {
			rel, err := filepath.Rel(home, o.File)
			if err != nil {
				t.Fatal(err)
			}
			out[s.Name] = append(out[s.Name], string(o.Client)+" "+string(o.Scope)+" "+rel+" "+o.Name)
		}
	}
	return out
}

func TestFindFixtureHome(t *testing.T) {
	home := discovertest.Home(t)
	var rec recorder
	res := Find(rec.host(Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config"), KnownProjects: true,
		Projects: []string{filepath.Join(home, "work", "app")}}))
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"app-db": {
			"claude-code local .claude.json app-db",
			"cursor project work/app/.cursor/mcp.json app-db",
		},
		"app-report":     {"codex project work/app/.codex/config.toml app-report"},
		"app-search":     {"gemini project work/app/.gemini/settings.json app-search"},
		"context7":       {"codex user .codex/config.toml context7"},
		"copilot-github": {"vscode user .config/Code/User/mcp.json copilot-github"},
		"docs": {
			"cursor user .cursor/mcp.json docs",
			"claude-code project work/app/.mcp.json docs",
		},
		"figma":      {"codex user .codex/config.toml figma"},
		"filesystem": {"claude-desktop user .config/Claude/claude_desktop_config.json filesystem"},
		"github": {
			"claude-code user .claude.json github",
			"claude-desktop user .config/Claude/claude_desktop_config.json gh",
			"cursor user .cursor/mcp.json github",
		},
		"github-vscode": {"vscode project work/app/.vscode/mcp.json github"},
		"httpServer":    {"gemini user .gemini/settings.json httpServer"},
		"linear":        {"windsurf user .codeium/windsurf/mcp_config.json linear"},
		"pythonTools":   {"gemini user .gemini/settings.json pythonTools"},
		"report":        {"claude-code project work/app/.mcp.json report"},
		"sentry":        {"claude-code user .claude.json sentry"},
		"time":          {"vscode user .config/Code/User/profiles/3f2a9c/mcp.json time"},
		"zapier":        {"windsurf user .codeium/windsurf/mcp_config.json zapier"},
	}
	if got := summary(t, home, res); !reflect.DeepEqual(got, want) {
		t.Errorf("servers:\n got: %v\nwant: %v", got, want)
	}

	var files []string
	for _, f := range res.Files {
		rel, _ := filepath.Rel(home, f.Path)
		files = append(files, rel)
	}
	wantFiles := []string{
		".claude.json",
		".config/Claude/claude_desktop_config.json",
		".cursor/mcp.json",
		".config/Code/User/mcp.json",
		".config/Code/User/settings.json",
		".config/Code/User/profiles/3f2a9c/mcp.json",
		".codeium/windsurf/mcp_config.json",
		".codex/config.toml",
		".gemini/settings.json",
		"work/app/.mcp.json",
		"work/app/.cursor/mcp.json",
		"work/app/.vscode/mcp.json",
		"work/app/.codex/config.toml",
		"work/app/.gemini/settings.json",
	}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files:\n got: %q\nwant: %q", files, wantFiles)
	}

	// Nothing but the documented paths was opened: every read is one of
	// them, and no decoy (a backup, another project, the macOS folder on
	// Linux, a key) was touched.
	documented := map[string]bool{}
	for _, c := range (Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config")}).userCandidates() {
		documented[c.path] = true
		if c.profiles != "" {
			documented[c.path+"/"] = true
		}
	}
	for _, dir := range []string{filepath.Join(home, "work", "app"), filepath.Join(home, "work", "gone")} {
		for _, c := range projectCandidates(dir) {
			documented[c.path] = true
		}
	}
	documented[filepath.Join(home, ".config/Code/User/profiles/3f2a9c/mcp.json")] = true
	documented[filepath.Join(home, ".gemini/trustedFolders.json")] = true
	for _, p := range rec.paths {
		if !documented[p] {
			t.Errorf("read %s, which is no documented client config path", p)
		}
		if strings.Contains(p, "decoy") || strings.Contains(p, "other") || strings.Contains(p, ".ssh") ||
			strings.Contains(p, "Library") || strings.HasSuffix(p, ".bak") || p == filepath.Join(home, ".mcp.json") {
			t.Errorf("read the decoy %s", p)
		}
	}
	for name := range summary(t, home, res) {
		if strings.HasPrefix(name, "decoy") || name == "mac-notes" || name == "paused" || name == "old" || name == "experimental" {
			t.Errorf("found %s, which is a decoy, disabled or excluded", name)
		}
	}
}

func TestFindSpecs(t *testing.T) {
	home := discovertest.Home(t)
	res := Find(Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config"), KnownProjects: true,
		Projects: []string{filepath.Join(home, "work", "app")}})
	specs := map[string]any{}
	for _, s := range res.Servers {
		specs[s.Name] = s.Origins[0].Spec
	}
	want := map[string]any{
		// Codex: literal values escaped, named variables as references.
		"context7": map[string]any{"command": "npx", "args": []any{"-y", "@upstash/context7-mcp"},
			"env": map[string]any{"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}},
		"figma": map[string]any{"url": "https://mcp.figma.com/mcp", "type": "http",
			"headers": map[string]any{"Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Figma-Region": "us-east-1"}},
		"app-report": map[string]any{"command": "python3", "args": []any{"./report_server.py", "--price=$$5"}},
		// Gemini CLI: httpUrl is streamable HTTP, url SSE, $VAR a reference.
		"httpServer":  map[string]any{"url": "http://localhost:3000/mcp", "type": "http"},
		"app-search":  map[string]any{"url": "http://127.0.0.1:8931/sse", "type": "sse"},
		"pythonTools": map[string]any{"command": "python3", "args": []any{"-m", "my_mcp_server", "--port", "8080"}, "cwd": "./mcp-servers/python", "env": map[string]any{"API_KEY": "${EXTERNAL_API_KEY}"}},
		// Windsurf: serverUrl is the url.
		"linear": map[string]any{"url": "https://mcp.linear.app/sse"},
	}
	for name, w := range want {
		if !reflect.DeepEqual(specs[name], w) {
			t.Errorf("%s:\n got: %#v\nwant: %#v", name, specs[name], w)
		}
	}
}

func TestFindOtherSystems(t *testing.T) {
	home := discovertest.Home(t)
	cases := []struct {
		name string
		host Host
		want string // the Claude Desktop server found
	}{
		{"macOS reads Application Support", Host{OS: "darwin", Home: home}, "mac-notes"},
		{"Windows reads %APPDATA%", Host{OS: "windows", Home: home, AppData: filepath.Join(home, "Library", "Application Support")}, "mac-notes"},
		{"Linux reads ~/.config", Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config")}, "filesystem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.host.Clients = []Client{ClaudeDesktop}
			res := Find(tc.host)
			var names []string
			for _, s := range res.Servers {
				names = append(names, s.Name)
			}
			if len(names) == 0 || !slices.Contains(names, tc.want) {
				t.Errorf("found %v, want %s among them", names, tc.want)
			}
		})
	}
}

func TestFindProjectsGiven(t *testing.T) {
	home := discovertest.Home(t)
	other := filepath.Join(home, "work", "other")
	res := Find(Host{OS: "linux", Home: home, Projects: []string{other}, Clients: []Client{ClaudeCode}})
	var names []string
	for _, s := range res.Servers {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	// Without KnownProjects, the recorded project's files are not read
	// (its local-scope server is in ~/.claude.json itself); the folder
	// given is.
	want := []string{"app-db", "decoy-unrecorded-project", "github", "sentry"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

func TestFindBrokenFile(t *testing.T) {
	home := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".cursor/mcp.json", `{"mcpServers": {"a": {"command": "x"}},, }`)
	write(".claude.json", `{"mcpServers": {"b": {"command": "y"}} // a comment
}`)
	write(".codex/config.toml", "[mcp_servers.c]\nargs = \"ghp_notAList1234567890\"\n")
	write(".gemini/settings.json", `{"mcpServers": {"d": {"command": "z"}}}`)
	res := Find(Host{OS: "linux", Home: home})
	var errs []string
	for _, f := range res.Files {
		if f.Err != nil {
			errs = append(errs, f.Err.Error())
		}
	}
	want := []string{
		filepath.Join(home, ".claude.json") + ":1:40: a comment, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove it",
		filepath.Join(home, ".cursor/mcp.json") + ":1:42: not valid JSON: invalid character looking for beginning of object key string",
		filepath.Join(home, ".codex/config.toml") + ":2:1: mcp_servers.c.args: the wrong type (TOML value has type string; Codex expects a list); fix the file as Codex would read it",
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("errors:\n got: %q\nwant: %q", errs, want)
	}
	for _, e := range errs {
		if strings.Contains(e, "ghp_") {
			t.Errorf("an error quotes the file: %s", e)
		}
	}
	if len(res.Servers) != 1 || res.Servers[0].Name != "d" {
		t.Errorf("the readable file's server is not found: %+v", res.Servers)
	}
}

func TestGeminiRefs(t *testing.T) {
	cases := map[string]string{
		"$TOKEN":          "${TOKEN}",
		"Bearer ${TOKEN}": "Bearer ${TOKEN}",
		"price $5":        "price $$5",
		"$A-$B_c":         "${A}-${B_c}",
		"${A:-x}":         "${A:-x}",
	}
	for in, want := range cases {
		if got := geminiRefs(in); got != want {
			t.Errorf("geminiRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

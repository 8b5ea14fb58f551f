package imports

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/discover/discovertest"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/registry/registrytest"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestLoadDiscoverImport(t *testing.T) {
	home := discovertest.Home(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	writeFile(t, path, `
imports:
  - discover: true
    exclude: [zapier]
    projects: [`+filepath.Join(home, "work", "app")+`]
servers:
  own:
    url: https://own.example.com/mcp
`)
	l := &config.Loader{Sources: &sources{Host: func() (discover.Host, error) {
		return discover.Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config")}, nil
	}}}
	cfg, err := l.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	want := "app-db app-report app-search context7 copilot-github docs figma filesystem github github-vscode httpServer linear own pythonTools report sentry time"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("servers:\n got: %s\nwant: %s", got, want)
	}
	github, _ := cfg.Server("github")
	if github.Source != filepath.Join(home, ".claude.json") || github.Timeout != config.BuiltinDefaults().Timeout {
		t.Errorf("github: source %s, timeout %s", github.Source, github.Timeout)
	}
	tgt, _, err := launch.Resolve(github, mapLookup(map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-1"}))
	if err != nil || tgt.Command != "npx" || tgt.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp-1" || tgt.Transport != probe.TransportStdio {
		t.Errorf("github target %+v, %v", tgt, err)
	}
	figma, _ := cfg.Server("figma")
	tgt, _, err = launch.Resolve(figma, mapLookup(map[string]string{"FIGMA_OAUTH_TOKEN": "fig-1"}))
	if err != nil || tgt.Headers["Authorization"] != "Bearer fig-1" || tgt.Transport != probe.TransportHTTP {
		t.Errorf("figma target %+v, %v", tgt, err)
	}
}

// A cloned repository holding a server in each of the five project-scope
// files, recorded in ~/.claude.json with its trust dialog refused and its
// server disabled: discover: true imports none of them.
func TestLoadDiscoverImportRefusedClone(t *testing.T) {
	home := t.TempDir()
	clone := filepath.Join(home, "src", "clone")
	writeFile(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+clone+`": {"hasTrustDialogAccepted": false, "disabledMcpjsonServers": ["evil"]}}}`)
	writeFile(t, filepath.Join(clone, ".mcp.json"), `{"mcpServers": {"evil": {"command": "./evil.sh"}}}`)
	writeFile(t, filepath.Join(clone, ".codex", "config.toml"), "[mcp_servers.evil-codex]\ncommand = \"./evil.sh\"\nargs = [\"codex\"]\n")
	writeFile(t, filepath.Join(clone, ".vscode", "mcp.json"), `{"servers": {"evil-vscode": {"command": "./evil.sh", "args": ["vscode"]}}}`)
	writeFile(t, filepath.Join(clone, ".gemini", "settings.json"), `{"mcpServers": {"evil-gemini": {"command": "./evil.sh", "args": ["gemini"]}}}`)
	writeFile(t, filepath.Join(clone, ".cursor", "mcp.json"), `{"mcpServers": {"evil-cursor": {"command": "./evil.sh", "args": ["cursor"]}}}`)
	path := filepath.Join(t.TempDir(), "mcpwatch.yml")
	writeFile(t, path, "imports:\n  - discover: true\nservers:\n  own: {url: https://own.example.com/mcp}\n")
	l := &config.Loader{Sources: &sources{Host: func() (discover.Host, error) { return discover.Host{OS: "linux", Home: home}, nil }}}
	cfg, err := l.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Servers {
		if s.Name != "own" {
			t.Errorf("imported %s from %s, a cloned repository's file the user never approved", s.Name, s.Source)
		}
	}

	// Named under projects:, Claude Code's refusal still holds.
	writeFile(t, path, "imports:\n  - {discover: true, clients: [claude-code], projects: ["+clone+"]}\nservers:\n  own: {url: https://own.example.com/mcp}\n")
	if cfg, err = l.Load(path); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 {
		t.Errorf("named, the refused .mcp.json still gave %d servers", len(cfg.Servers)-1)
	}
}

func TestLoadDiscoverImportErrors(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"both": {"command": "x", "url": "https://x.example.com/mcp"}}}`)
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"mcpServers": `)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	l := &config.Loader{Sources: &sources{Host: func() (discover.Host, error) { return discover.Host{OS: "linux", Home: home}, nil }}}

	writeFile(t, path, "imports:\n  - discover: true\n")
	_, err := l.Load(path)
	want := []string{
		path + ": imports[0]: " + filepath.Join(home, ".gemini/settings.json") + ":1:15: not valid JSON: unexpected end of JSON input (a gemini file); fix it, or leave gemini out with clients: [...]",
		filepath.Join(home, ".cursor/mcp.json") + ": mcpServers.both: both command and url are set; a server is either a process mcpwatch starts (command) or a remote server (url): keep one; fix it, or list both under exclude: of imports[0]",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}

	writeFile(t, path, "imports:\n  - {discover: true, clients: [cursor], exclude: [both]}\nservers:\n  own: {url: https://own.example.com/mcp}\n")
	if _, err := l.Load(path); err != nil {
		t.Errorf("with the broken file's client left out and the broken server excluded: %v", err)
	}

	cases := map[string]string{
		"imports:\n  - {discover: true, registry: ./r.json}\n":    path + ": imports[0]: give one of path:, discover: true and registry: per import; write one import for each",
		"imports:\n  - {discover: true, clients: [emacs]}\n":      path + `: imports[0].clients[0]: "emacs" is not a client discovery knows; use claude-code, claude-desktop, cursor, vscode, windsurf, codex, gemini`,
		"imports:\n  - {path: .mcp.json, clients: [cursor]}\n":    path + ": imports[0].clients: applies only to discover: true; remove it",
		"imports:\n  - {discover: true, packages: true}\n":        path + ": imports[0].packages: applies only to registry:; remove it",
		"imports:\n  - {registry: ''}\n":                          path + ": imports[0].registry: is empty; give the URL of a registry API (https://registry.modelcontextprotocol.io) or a file of server.json entries",
		"imports:\n  - {registry: 'https://'}\n":                  path + ": imports[0].registry: is not an http:// or https:// URL of a registry API (such as https://registry.modelcontextprotocol.io)",
		"imports:\n  - {registry: ./missing.json}\nservers: {}\n": path + ": imports[0]: registry file " + filepath.Join(dir, "missing.json") + ": no such file",
	}
	for content, want := range cases {
		writeFile(t, path, content)
		_, err := l.Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s\n got: %v\nwant: %s", content, err, want)
		}
	}
}

func registryEntry(i int) map[string]any {
	return map[string]any{
		"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		"name":    fmt.Sprintf("io.example.fleet/server-%03d", i), "description": "d", "version": "1.0.0",
		"remotes": []any{map[string]any{"type": "streamable-http", "url": fmt.Sprintf("https://mcp.example.com/%03d/mcp", i),
			"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer {token}",
				"variables": map[string]any{"token": map[string]any{"isSecret": true, "isRequired": true}}}}}},
	}
}

// A registry of 500 entries is imported; a reload asks only for what
// changed since, and picks up one deleted and one added entry.
func TestLoadRegistryImportReload(t *testing.T) {
	reg := registrytest.New(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 500 {
		reg.Put(registryEntry(i), t0.Add(time.Duration(i)*time.Second))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	writeFile(t, path, "imports:\n  - registry: "+reg.URL+"\n")
	l := NewLoader()

	cfg, err := l.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 500 {
		t.Fatalf("%d servers, want 500", len(cfg.Servers))
	}
	s, _ := cfg.Server("io.example.fleet/server-007")
	if s.URL != "https://mcp.example.com/007/mcp" || s.Headers["Authorization"] != "Bearer ${IO_EXAMPLE_FLEET_SERVER_007_57CFAE23A74B_TOKEN}" || s.Source != reg.URL || s.Transport != probe.TransportHTTP {
		t.Errorf("server-007: %+v", s)
	}
	firstLoad := len(reg.Requests())

	reg.Delete("io.example.fleet/server-042", t0.Add(time.Hour))
	reg.Put(registryEntry(500), t0.Add(2*time.Hour))
	cfg, err = l.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	if len(names) != 500 || slices.Contains(names, "io.example.fleet/server-042") || !slices.Contains(names, "io.example.fleet/server-500") {
		t.Errorf("after the reload: %d servers, 042 present %v, 500 present %v", len(names), slices.Contains(names, "io.example.fleet/server-042"), slices.Contains(names, "io.example.fleet/server-500"))
	}
	reqs := reg.Requests()[firstLoad:]
	if len(reqs) != 1 || reqs[0].Get("updated_since") != t0.Add(499*time.Second).Format(time.RFC3339Nano) {
		t.Errorf("the reload's requests: %v; want one, with updated_since", reqs)
	}

	// The registry is down: the load fails, naming it; with optional: true
	// the servers of the last sync stay.
	reg.Close()
	if _, err := l.Load(path); err == nil || !strings.Contains(err.Error(), "imports[0]: cannot read the registry: "+reg.URL+"/v0.1/servers: ") {
		t.Errorf("got %v", err)
	}
	writeFile(t, path, "imports:\n  - {registry: "+reg.URL+", optional: true}\n")
	if cfg, err := l.Load(path); err != nil || len(cfg.Servers) != 500 {
		t.Errorf("optional registry down: %v", err)
	}
}

// A registry's remotes at loopback, link-local or private addresses, or
// over http, are not imported (a registry would choose the headers sent to
// the host's own services); private_remotes: true imports them.
func TestLoadRegistryPrivateRemotes(t *testing.T) {
	dir := t.TempDir()
	remote := func(name, url string) string {
		return `{"name": "` + name + `", "remotes": [{"type": "streamable-http", "url": "` + url + `",
			"headers": [{"name": "Metadata-Flavor", "value": "Google"}]}]}`
	}
	writeFile(t, filepath.Join(dir, "servers.json"), "["+strings.Join([]string{
		remote("io.x/metadata", "https://169.254.169.254/computeMetadata/v1/"),
		remote("io.x/loopback", "https://127.0.0.1:8080/mcp"),
		remote("io.x/private", "https://10.0.0.7/mcp"),
		remote("io.x/v6", "https://[::1]/mcp"),
		remote("io.x/localhost", "https://localhost/mcp"),
		remote("io.x/plain", "http://mcp.example.com/mcp"),
		remote("io.x/public", "https://mcp.example.com/mcp"),
	}, ",")+"]")
	path := filepath.Join(dir, "mcpwatch.yml")
	for _, tc := range []struct {
		yml     string
		want    string
		private bool
	}{
		{"imports:\n  - registry: ./servers.json\n", "io.x/public", false},
		{"imports:\n  - {registry: ./servers.json, private_remotes: true}\n",
			"io.x/localhost io.x/loopback io.x/metadata io.x/plain io.x/private io.x/public io.x/v6", true},
	} {
		writeFile(t, path, tc.yml)
		cfg, err := NewLoader().Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range cfg.Servers {
			names = append(names, s.Name)
			// What a name resolves to is checked as the probe dials,
			// unless private_remotes allows any address.
			target, _, err := launch.Resolve(s, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			if want := !tc.private; target.PublicOnly != want {
				t.Errorf("%s: %s: target.PublicOnly %v, want %v", tc.yml, s.Name, target.PublicOnly, want)
			}
			if tc.private == (target.PublicOnlyFix != "") ||
				!tc.private && !strings.Contains(target.PublicOnlyFix, "set private_remotes: true on "+path+" imports[0]") {
				t.Errorf("%s: %s: PublicOnlyFix %q", tc.yml, s.Name, target.PublicOnlyFix)
			}
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s: imported %s, want %s", tc.yml, got, tc.want)
		}
	}
}

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

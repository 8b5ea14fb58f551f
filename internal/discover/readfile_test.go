package discover

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Discovery and an import of the file stop at one size (MaxFileBytes): a
// .mcp.json past it is an error both ways, not read whole by one of them.
func TestOneSizeLimit(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "app")
	big := `{"mcpServers": {"a": {"command": "x"}}, "pad": "` + strings.Repeat("x", MaxFileBytes) + `"}`
	writeFiles(t, home, map[string]string{"app/.mcp.json": big})
	res := Find(Host{OS: "linux", Home: home, Projects: []string{project}})
	if err := res.Err(); err == nil || len(res.Servers) != 0 {
		t.Errorf("discover read a %d-byte file: %v, %d servers", len(big), err, len(res.Servers))
	}
	if _, err := ReadFile(filepath.Join(project, ".mcp.json"), ""); err == nil {
		t.Errorf("ReadFile read a %d-byte file", len(big))
	}
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadFile(filepath.Join(project, ".mcp.json"), ""); err != nil || len(p.Origins) != 1 || p.Client != ClaudeCode {
		t.Errorf("a small .mcp.json: %+v, %v", p, err)
	}
}

// A client config file named by the user is read as its client reads it,
// told by its path; what holds no server says which keys it holds, and an
// mcp-probe list is handed back as it is.
func TestReadFileFormats(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"p/.vscode/mcp.json":                `{"servers": {"v": {"command": "x"}}, /* a comment */}`,
		"Code/User/settings.json":           `{"mcp": {"servers": {"s": {"url": "https://s.example/mcp"}}}}`,
		".codeium/windsurf/mcp_config.json": `{"mcpServers": {"w": {"serverUrl": "https://w.example/sse", "disabled": false}, "off": {"command": "x", "disabled": true}}}`,
		"agents.json":                       `{"servers": {"a": {"command": "x"}}}`,
		"empty-keys.json":                   `{"theme": "dark", "editor": {}}`,
		"mcp-probe.config.json":             `{"servers": [{"name": "p", "target": "https://p.example/mcp"}]}`,
		"p/.mcp.json":                       `{"servers": {"m": {"command": "x"}}}`,
		"p/.codex/config.toml":              "[mcp_servers.c]\ncommand = \"run$1\"\n",
		"Claude/claude_desktop_config.json": `{"mcpServers": {"d": {"command": "x"}}}`,
	})
	for _, tc := range []struct {
		file    string
		client  Client
		servers string // name=project-relative-dir of each origin
		keys    string
	}{
		{"p/.vscode/mcp.json", VSCode, "v=p", ""},
		{"Code/User/settings.json", VSCode, "s=Code/User", ""},
		{".codeium/windsurf/mcp_config.json", Windsurf, "w=.codeium/windsurf", ""},
		{"agents.json", "", "a=.", ""},
		{"empty-keys.json", "", "", "editor,theme"},
		{"p/.mcp.json", ClaudeCode, "m=p", ""},
		{"p/.codex/config.toml", Codex, "c=p", ""},
		{"Claude/claude_desktop_config.json", ClaudeDesktop, "d=Claude", ""},
	} {
		p, err := ReadFile(filepath.Join(dir, tc.file), "")
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		var servers []string
		for _, o := range p.Origins {
			rel, _ := filepath.Rel(dir, o.Project)
			servers = append(servers, o.Name+"="+filepath.ToSlash(rel))
		}
		if p.Client != tc.client || strings.Join(servers, ",") != tc.servers || strings.Join(p.Keys, ",") != tc.keys || p.NoServers != (tc.keys != "") {
			t.Errorf("%s: client %q, servers %q, keys %q (none: %v); want %q, %q, %q", tc.file, p.Client, servers, p.Keys, p.NoServers, tc.client, tc.servers, tc.keys)
		}
	}
	w, _ := ReadFile(filepath.Join(dir, ".codeium/windsurf/mcp_config.json"), "")
	if spec := w.Origins[0].Spec.(map[string]any); spec["url"] != "https://w.example/sse" || spec["serverUrl"] != nil {
		t.Errorf("windsurf's serverUrl is its url: %v", spec)
	}
	c, _ := ReadFile(filepath.Join(dir, "p/.codex/config.toml"), "")
	if spec := c.Origins[0].Spec.(map[string]any); spec["command"] != "run$$1" {
		t.Errorf("a Codex value is literal, its $ escaped: %v", spec)
	}
	list, err := ReadFile(filepath.Join(dir, "mcp-probe.config.json"), "")
	if err != nil || len(list.ServerList) != 1 || len(list.Origins) != 0 {
		t.Errorf("an mcp-probe list: %+v %v", list, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none.json"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// What cannot be read names the file, the line where it has one, and what
// the client expects, quoting nothing of the file.
func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".mcp.json":             "",
		"list/.mcp.json":        `{"mcpServers": ["sk-secret-value"]}`,
		".gemini/settings.json": `{"mcpServers": "sk-secret-value"}`,
		"p/.codex/config.toml":  "[mcp_servers.c\ncommand = \"sk-secret-value\"\n",
	})
	for file, want := range map[string]string{
		".mcp.json":             `.mcp.json: is empty; it needs a JSON object such as {"mcpServers": {...}}`,
		"list/.mcp.json":        "list/.mcp.json: mcpServers: expected a mapping, got a list",
		".gemini/settings.json": ".gemini/settings.json: mcpServers: expected a mapping, got a string",
		"p/.codex/config.toml":  "p/.codex/config.toml:2:15: not valid TOML; fix the file as Codex would read it",
	} {
		_, err := ReadFile(filepath.Join(dir, file), "")
		if err == nil || err.Error() != filepath.Join(dir, filepath.FromSlash(file))+strings.TrimPrefix(want, file) {
			t.Errorf("%s: %v, want it to say %q", file, err, want)
			continue
		}
		if strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the error quotes the file: %v", file, err)
		}
	}
}

package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDiscover(t *testing.T) {
	seedMCP := `{
  "mcpServers": {
    "report": {
      "command": "python3",
      "args": ["./report_server.py"],
      "env": { "REPORT_API_TOKEN": "${REPORT_API_TOKEN}" }
    }
  }
}`
	yml := "servers:\n  a: {command: x, timeout: 4s}\n"
	cases := []struct {
		name    string
		named   string // --config.file
		files   map[string]string
		env     map[string]string
		source  string // Source.Name
		client  bool
		servers string
		lock    string
		timeout time.Duration
		err     string
	}{
		{name: "Python preflight layout", files: map[string]string{".mcp.json": seedMCP},
			source: ".mcp.json", client: true, servers: "report", lock: "DIR/mcp-tools.lock.json", timeout: 10 * time.Second},
		{name: "Python preflight variables", files: map[string]string{"ci/servers.json": seedMCP},
			env:    map[string]string{"MCP_CONFIG": "ci/servers.json", "MCP_TOOL_LOCK": "/etc/lock.json", "MCP_PROBE_TIMEOUT_S": "2.5"},
			source: "ci/servers.json", client: true, servers: "report", lock: "/etc/lock.json", timeout: 2500 * time.Millisecond},
		{name: "MCP_CONFIG names an mcpwatch.yml", files: map[string]string{"w/mcpwatch.yml": yml},
			env:    map[string]string{"MCP_CONFIG": "w/mcpwatch.yml"},
			source: "w/mcpwatch.yml", servers: "a", lock: "DIR/w/mcp-tools.lock.json", timeout: 4 * time.Second},
		{name: "MCP_TOOL_LOCK with the mcpwatch.yml MCP_CONFIG names", files: map[string]string{"w/mcpwatch.yml": yml},
			env:    map[string]string{"MCP_CONFIG": "w/mcpwatch.yml", "MCP_TOOL_LOCK": "ci.lock"},
			source: "w/mcpwatch.yml", servers: "a", lock: "DIR/ci.lock", timeout: 4 * time.Second},
		{name: "MCP_CONFIG names YAML without an extension", files: map[string]string{"w/watch": yml},
			env:    map[string]string{"MCP_CONFIG": "w/watch"},
			source: "w/watch", servers: "a", lock: "DIR/w/mcp-tools.lock.json", timeout: 4 * time.Second},
		{name: "./mcpwatch.yml before MCP_CONFIG and .mcp.json", files: map[string]string{"mcpwatch.yml": yml, ".mcp.json": seedMCP, "ci.json": seedMCP},
			env:    map[string]string{"MCP_CONFIG": "ci.json", "MCP_TOOL_LOCK": "ci.lock"},
			source: "mcpwatch.yml", servers: "a", lock: "DIR/mcp-tools.lock.json", timeout: 4 * time.Second},
		{name: "--config.file before everything", named: "other.json", files: map[string]string{"mcpwatch.yml": yml, "other.json": seedMCP},
			source: "other.json", client: true, servers: "report", lock: "DIR/mcp-tools.lock.json", timeout: 10 * time.Second},
		{name: "a named client config is read the Python preflight's way", named: "other", files: map[string]string{"other": " \n" + seedMCP},
			env:    map[string]string{"MCP_TOOL_LOCK": "ci.lock", "MCP_PROBE_TIMEOUT_S": "3"},
			source: "other", client: true, servers: "report", lock: "DIR/ci.lock", timeout: 3 * time.Second},
		{name: "a named mcpwatch.yml keeps its lock", named: "w/mcpwatch.yml", files: map[string]string{"w/mcpwatch.yml": yml},
			env:    map[string]string{"MCP_TOOL_LOCK": "ci.lock", "MCP_PROBE_TIMEOUT_S": "3"},
			source: "w/mcpwatch.yml", servers: "a", lock: "DIR/w/mcp-tools.lock.json", timeout: 4 * time.Second},
		{name: "no .mcp.json", source: ".mcp.json", client: true,
			err: "no mcpwatch.yml given and no .mcp.json in DIR: pass -c mcpwatch.yml, set MCP_CONFIG, or run where .mcp.json is"},
		{name: "MCP_CONFIG missing", env: map[string]string{"MCP_CONFIG": "nope.json"}, source: "nope.json",
			err: "MCP_CONFIG=DIR/nope.json: no such file; point it at a client config or an mcpwatch.yml"},
		{name: "named file missing", named: "nope.yml", source: "nope.yml",
			err: "read config: open DIR/nope.yml: no such file or directory"},
		{name: "bad timeout", files: map[string]string{".mcp.json": seedMCP}, env: map[string]string{"MCP_PROBE_TIMEOUT_S": "10s"}, source: ".mcp.json", client: true,
			err: `MCP_PROBE_TIMEOUT_S="10s" is not a number of seconds; set it like 10 or 2.5`},
		{name: "no servers", files: map[string]string{".mcp.json": `{"mcpServers": {}}`}, source: ".mcp.json", client: true,
			err: "DIR/.mcp.json: defines no servers to watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			getenv := func(k string) string { return tc.env[k] }
			src, err := Discover(tc.named, dir, getenv)
			if src.Name != tc.source || src.Client != tc.client {
				t.Errorf("source %q (client %t), want %q (client %t)", src.Name, src.Client, tc.source, tc.client)
			}
			var cfg *Config
			if err == nil {
				cfg, err = loadSource(src, getenv)
			}
			if tc.err != "" {
				if err == nil || strings.ReplaceAll(err.Error(), dir, "DIR") != tc.err {
					t.Fatalf("got %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range cfg.Servers {
				names = append(names, s.Name)
				if s.Timeout != tc.timeout {
					t.Errorf("%s: Timeout = %s, want %s", s.Name, s.Timeout, tc.timeout)
				}
			}
			if strings.Join(names, " ") != tc.servers {
				t.Errorf("servers = %v", names)
			}
			if got := strings.ReplaceAll(cfg.Lock, dir, "DIR"); got != tc.lock {
				t.Errorf("Lock = %s, want %s", got, tc.lock)
			}
		})
	}
}

// Finding nothing is an error a command can tell apart (serve says what to
// create), and it is a missing file.
func TestDiscoverNothing(t *testing.T) {
	_, err := Discover("", t.TempDir(), func(string) string { return "" })
	if !errors.Is(err, ErrNoConfiguration) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v: want ErrNoConfiguration and fs.ErrNotExist", err)
	}
	_, err = Discover("", t.TempDir(), func(string) string { return "absent.json" })
	if errors.Is(err, ErrNoConfiguration) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v for a missing $MCP_CONFIG: want fs.ErrNotExist alone", err)
	}
}

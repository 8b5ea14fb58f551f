package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefault(t *testing.T) {
	seedMCP := `{
  "mcpServers": {
    "report": {
      "command": "python3",
      "args": ["./report_server.py"],
      "env": { "REPORT_API_TOKEN": "${REPORT_API_TOKEN}" }
    }
  }
}`
	cases := []struct {
		name    string
		files   map[string]string
		env     map[string]string
		servers string
		lock    string
		timeout time.Duration
		err     string
	}{
		{name: "Python preflight layout", files: map[string]string{".mcp.json": seedMCP},
			servers: "report", lock: "DIR/mcp-tools.lock.json", timeout: 10 * time.Second},
		{name: "Python preflight variables", files: map[string]string{"ci/servers.json": seedMCP},
			env:     map[string]string{"MCP_CONFIG": "ci/servers.json", "MCP_TOOL_LOCK": "/etc/lock.json", "MCP_PROBE_TIMEOUT_S": "2.5"},
			servers: "report", lock: "/etc/lock.json", timeout: 2500 * time.Millisecond},
		{name: "MCP_CONFIG names an mcpwatch.yml", files: map[string]string{"w/mcpwatch.yml": "servers:\n  a: {command: x, timeout: 4s}\n"},
			env:     map[string]string{"MCP_CONFIG": "w/mcpwatch.yml"},
			servers: "a", lock: "DIR/w/mcp-tools.lock.json", timeout: 4 * time.Second},
		{name: "no .mcp.json", err: "no mcpwatch.yml given and no .mcp.json in DIR: pass -c mcpwatch.yml, set MCP_CONFIG, or run where .mcp.json is"},
		{name: "MCP_CONFIG missing", env: map[string]string{"MCP_CONFIG": "nope.json"},
			err: "MCP_CONFIG=DIR/nope.json: no such file; point it at a client config or an mcpwatch.yml"},
		{name: "bad timeout", files: map[string]string{".mcp.json": seedMCP}, env: map[string]string{"MCP_PROBE_TIMEOUT_S": "10s"},
			err: `MCP_PROBE_TIMEOUT_S="10s" is not a number of seconds; set it like 10 or 2.5`},
		{name: "no servers", files: map[string]string{".mcp.json": `{"mcpServers": {}}`},
			err: "DIR/.mcp.json: defines no servers to watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			getenv := func(k string) string { return tc.env[k] }
			cfg, err := Default(dir, getenv)
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

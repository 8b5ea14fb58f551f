package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// TestTransportOneVocabulary: every source reads a transport as
// probe.ParseTransport does, case and streamable HTTP's spellings included:
// "STDIO" on a command is stdio, not a transport for URLs.
func TestTransportOneVocabulary(t *testing.T) {
	cases := []struct {
		name, file, content string
		want                probe.Transport
	}{
		{"mcpwatch.yml, a command", "mcpwatch.yml", "servers:\n  a: {command: x, transport: STDIO}\n", probe.TransportStdio},
		{"mcpwatch.yml, a url", "mcpwatch.yml", "servers:\n  a: {url: 'https://x.example.com/mcp', transport: Streamable-HTTP}\n", probe.TransportHTTP},
		{"client file, a command", ".mcp.json", `{"mcpServers": {"a": {"type": "STDIO", "command": "x"}}}`, probe.TransportStdio},
		{"client file, a url", ".mcp.json", `{"mcpServers": {"a": {"type": "SSE", "url": "https://x.example.com/sse"}}}`, probe.TransportSSE},
		{"mcp-probe config, a command", "mcp-probe.config.json", `{"servers": [{"name": "a", "target": "x --verbose", "transport": "Stdio"}]}`, probe.TransportStdio},
		{"mcp-probe config, a url", "mcp-probe.config.json", `{"servers": [{"name": "a", "target": "https://x.example.com/mcp", "transport": "streamable-http"}]}`, probe.TransportHTTP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			writeFile(t, path, tc.content)
			var servers []Server
			var err error
			if tc.file == "mcpwatch.yml" {
				var cfg *Config
				if cfg, err = Load(path); err == nil {
					servers = cfg.Servers
				}
			} else {
				servers, err = readClientConfig(path)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(servers) != 1 || servers[0].Transport != tc.want {
				t.Fatalf("servers %+v, want one with transport %s", servers, tc.want)
			}
		})
	}
}

// An mcp-probe config's target of spaces alone is no target: it named no
// command to split (it panicked).
func TestMcpProbeBlankTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-probe.config.json")
	writeFile(t, path, `{"servers": [{"name": "a", "target": "   "}]}`)
	if _, err := readClientConfig(path); err == nil || !strings.Contains(err.Error(), "servers.a: has no target") {
		t.Errorf("got %v", err)
	}
}

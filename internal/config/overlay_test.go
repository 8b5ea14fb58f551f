package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// overlayDir is a temporary directory holding files.
func overlayDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

const overlayProbeConfig = `{"servers": [{"name": "datadog", "target": "https://mcp.example.com/mcp", "transport": "http",
  "expectedTools": ["logs_query"], "toolsFile": "./datadog.tools.json"}]}`

const overlayTools = `{"tools": {"logs_query": {"input": {"query": "x"}},
  "run_query": {"input": {"sql": "select 1"}, "allowSideEffects": true}}}`

// An entry with neither command nor url under servers: adds mcpwatch's
// settings to the imported server of its name: the second opt-in for a
// contract of the import's toolsFile, calls: auto, inline contracts,
// timeouts; what it does not set stays as imported.
func TestOverlayOnImportedServers(t *testing.T) {
	dir := overlayDir(t, map[string]string{
		"mcp-probe.config.json": overlayProbeConfig,
		"datadog.tools.json":    overlayTools,
		".mcp.json":             `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`,
		"mcpwatch.yml": `imports: [mcp-probe.config.json, .mcp.json]
servers:
  datadog:
    allow_destructive_calls: [run_query]
    timeout: 20s
  memory:
    calls: auto
    start_timeout: 5m
    forbid: ["delete_*"]
`,
	})
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 2 {
		t.Fatalf("servers %+v, want datadog and memory", cfg.Servers)
	}
	dd, mem := cfg.Servers[0], cfg.Servers[1]
	if dd.URL != "https://mcp.example.com/mcp" || dd.Timeout != 20*time.Second || !slices.Contains(dd.AllowDestructive, "run_query") || len(dd.Contracts) != 2 ||
		!slices.Equal(dd.ExpectedTools, []string{"logs_query"}) || dd.CallTimeout != 20*time.Second {
		t.Errorf("datadog %+v", dd)
	}
	if mem.Command != "npx" || mem.AutoCalls != 1 || !mem.HasCalls() || mem.StartTimeout != 5*time.Minute || mem.Timeout != 10*time.Second ||
		!slices.Equal(mem.Forbid, []string{"delete_*"}) || mem.Source != filepath.Join(dir, ".mcp.json") {
		t.Errorf("memory %+v", mem)
	}
	if dd.overlaySet != nil || mem.overlay {
		t.Error("the overlay's bookkeeping survived Load")
	}
}

func TestOverlayErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yml, want string
	}{
		{"a key that says what the server is", "servers:\n  datadog:\n    env: {A: b}\n",
			"servers.datadog: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server). (An entry for a server imported from a client configuration, which needs neither, may set only timeout, start_timeout, schedule, era, stdio_mode, restart_every, forbid, issuer_check, contracts, calls, auto_calls, call_schedule, call_timeout, allow_destructive_calls; this one sets env.)"},
		{"no such import", "servers:\n  datdog:\n    calls: auto\n",
			`servers.datdog: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server); or, to add settings to a server imported from a client configuration, name it as the import does (no imported server is called "datdog")`},
		{"an opt-in without allowSideEffects", "servers:\n  datadog:\n    allow_destructive_calls: [logs_query]\n",
			`servers.datadog.allow_destructive_calls[0]: the contract of "logs_query" does not say "allowSideEffects": true`},
		{"an opt-in without a contract", "servers:\n  datadog:\n    allow_destructive_calls: [drop_table]\n",
			`servers.datadog.allow_destructive_calls[0]: "drop_table" has no contract, here or in the imported server's`},
		{"a contract twice", "servers:\n  datadog:\n    calls: {logs_query: {input: {query: y}}}\n",
			`servers.datadog.calls.logs_query: the imported server has a contract for "logs_query" already`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := overlayDir(t, map[string]string{
				"mcp-probe.config.json": overlayProbeConfig,
				"datadog.tools.json":    overlayTools,
				"mcpwatch.yml":          "imports: [mcp-probe.config.json]\n" + tc.yml,
			})
			_, err := load(filepath.Join(dir, "mcpwatch.yml"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to hold %s", err, tc.want)
			}
		})
	}
}

package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// TestLoadErrors maps each bad config to its exact message, as
// blackbox_exporter does: the message is the interface a person reads.
func TestLoadErrors(t *testing.T) {
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, want string
	}{
		{"args_not_list.yml",
			"testdata/bad/args_not_list.yml: servers.report.args: expected a list of strings, got a string"},
		{"bad_duration.yml",
			"testdata/bad/bad_duration.yml: defaults.timeout: \"5 seconds\" is not a duration; write it like 10s or 1m30s"},
		{"bad_era.yml",
			"testdata/bad/bad_era.yml: defaults.era: is not an era; use auto, modern or legacy (the protocol version is negotiated, not configured)" +
				"\n" + "testdata/bad/bad_era.yml: servers.report.era: is not an era; use auto, modern or legacy (the protocol version is negotiated, not configured)"},
		{"bad_forbid.yml",
			"testdata/bad/bad_forbid.yml: servers.report.forbid[1]: \"[abc\" is not a valid glob (a [ is never closed by ]); use * (any characters, / included), ? and [a-z], and escape a literal one with \\"},
		{"bad_max_message_bytes.yml",
			"testdata/bad/bad_max_message_bytes.yml: defaults.max_message_bytes: is not a positive size; write " + bytesize.Grammar + ", e.g. 4194304 or 4MiB"},
		{"bad_reference.yml",
			"testdata/bad/bad_reference.yml: servers.report.env.REPORT_API_TOKEN: bad reference at byte 0: missing closing } (write $$ for a literal $)"},
		{"bad_schedule.yml",
			"testdata/bad/bad_schedule.yml: defaults.schedule: \"@every banana\" is not a schedule (\"banana\" is not a duration such as 30s or 5m); use a cron expression like \"*/5 * * * *\" or \"@every 30s\"" +
				"\n" + "testdata/bad/bad_schedule.yml: servers.report.schedule: \"* * *\" is not a schedule (expected exactly 5 fields, found 3: [* * *]); use a cron expression like \"*/5 * * * *\" or \"@every 30s\""},
		{"nonpositive_schedule.yml",
			"testdata/bad/nonpositive_schedule.yml: defaults.schedule: \"@every 0s\" is not a schedule (the interval must be positive); use a cron expression like \"*/5 * * * *\" or \"@every 30s\"" +
				"\n" + "testdata/bad/nonpositive_schedule.yml: defaults.call_schedule: \"@every -5s\" is not a schedule (the interval must be positive); use a cron expression like \"*/5 * * * *\" or \"@every 30s\"" +
				"\n" + "testdata/bad/nonpositive_schedule.yml: servers.report.schedule: \"@every -1m\" is not a schedule (the interval must be positive); use a cron expression like \"*/5 * * * *\" or \"@every 30s\""},
		{"bad_transport.yml",
			"testdata/bad/bad_transport.yml: servers.remote.transport: \"websocket\" is not a transport; use auto, http or sse"},
		{"bad_url_scheme.yml",
			"testdata/bad/bad_url_scheme.yml: servers.remote.url: must start with http:// or https://"},
		{"both_command_and_url.yml",
			"testdata/bad/both_command_and_url.yml: servers.report: both command and url are set; a server is either a process mcpwatch starts (command) or a remote server (url): keep one"},
		{"concurrency_string.yml",
			"testdata/bad/concurrency_string.yml: defaults.stdio_concurrency: expected an integer, got a string"},
		{"duplicate_across_imports.yml",
			"server \"report\" is defined in testdata/bad/clients/report.mcp.json and in testdata/bad/clients/vscode.json; rename one, or list it under exclude: of its import"},
		{"duplicate_in_file.yml",
			"testdata/bad/duplicate_in_file.yml: not valid YAML: yaml: unmarshal errors: line 3: mapping key \"report\" already defined at line 2"},
		{"duplicate_with_import.yml",
			"server \"report\" is defined in testdata/bad/duplicate_with_import.yml and in testdata/bad/clients/report.mcp.json; rename one, or list it under exclude: of its import"},
		{"duration_without_unit.yml",
			"testdata/bad/duration_without_unit.yml: servers.report.timeout: expected a duration with a unit, like 10s or 1m30s, got an integer"},
		{"empty_lock.yml",
			"testdata/bad/empty_lock.yml: lock: is empty; name the lock file or remove the key for mcp-tools.lock.json"},
		{"env_on_url.yml",
			"testdata/bad/env_on_url.yml: servers.remote.env: applies only to command servers, and this one has a url; remove it"},
		{"stdio_mode_bad.yml",
			"testdata/bad/stdio_mode_bad.yml: defaults.stdio_mode: \"always\" is not a stdio mode; use live (the server runs between probes) or fresh (one process per probe)\n" +
				"testdata/bad/stdio_mode_bad.yml: servers.remote.stdio_mode: applies only to command servers, and this one has a url; remove it\n" +
				"testdata/bad/stdio_mode_bad.yml: servers.report.restart_every: must be positive, got 0s"},
		{"env_value_not_string.yml",
			"testdata/bad/env_value_not_string.yml: servers.report.env.DEBUG: has no value; write \"\" for an empty one" +
				"\n" + "testdata/bad/env_value_not_string.yml: servers.report.env.PORT: expected a string, got an integer; quote the value"},
		{"headers_on_command.yml",
			"testdata/bad/headers_on_command.yml: servers.report.headers: applies only to url servers, and this one has a command; remove it"},
		{"import_bad_type.yml",
			"testdata/bad/clients/bad-type.json: mcpServers.args.args: expected a list of strings, got a string" +
				"\n" + "testdata/bad/clients/bad-type.json: mcpServers.empty: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server)" +
				"\n" + "testdata/bad/clients/bad-type.json: mcpServers.ws.type: \"websocket\" is not a server type mcpwatch can probe; use stdio, http or sse" +
				"\n" + "testdata/bad/clients/bad-type.json: mcpServers.ws.url: must start with http:// or https://"},
		{"import_malformed.yml",
			"testdata/bad/clients/malformed.json:4:5: not valid JSON: invalid character after object key:value pair"},
		{"import_missing.yml",
			"testdata/bad/import_missing.yml: imports[0]: cannot read testdata/bad/clients/nope.json (no such file or directory); fix the path, or write {path: ..., optional: true} if it may be absent"},
		{"import_not_client_config.yml",
			"testdata/bad/clients/package.json: holds no mcpServers or servers; is it a Claude Code, Claude Desktop, Cursor or VS Code MCP config?"},
		{"ignore_unknown.yml",
			"testdata/bad/ignore_unknown.yml: ignore[0]: \"reprot\" names no configured server; did you mean report?"},
		{"imports_not_list.yml",
			"testdata/bad/imports_not_list.yml: imports: expected a list of client config files, got a string"},
		{"inputs_both.yml",
			"testdata/bad/inputs_both.yml: inputs.api-key: give exactly one of env: VAR or file: PATH"},
		{"negative_concurrency.yml",
			"testdata/bad/negative_concurrency.yml: defaults.concurrency: must be at least 1, got -1"},
		{"neither_command_nor_url.yml",
			"testdata/bad/neither_command_nor_url.yml: servers.report: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server); or, to add settings to a server imported from a client configuration, name it as the import does (no imported server is called \"report\")"},
		{"no_servers.yml",
			"testdata/bad/no_servers.yml: no servers to watch; add servers: or imports:"},
		{"not_yaml.yml",
			"testdata/bad/not_yaml.yml: not valid YAML: yaml: line 4: did not find expected key"},
		{"server_not_mapping.yml",
			"testdata/bad/server_not_mapping.yml: servers.report: expected a mapping, got a string"},
		{"top_level_list.yml",
			"testdata/bad/top_level_list.yml: not a mapping at the top level; start with keys such as servers:"},
		{"transport_on_command.yml",
			"testdata/bad/transport_on_command.yml: servers.report.transport: applies only to url servers, and this one has a command; remove it"},
		{"unknown_defaults_key.yml",
			"testdata/bad/unknown_defaults_key.yml: defaults.concurency: unknown key; did you mean concurrency? (known keys here: auto_calls, call_schedule, call_timeout, calls, concurrency, era, inherit_env, issuer_check, issuer_check_interval, live_sessions, max_message_bytes, restart_every, schedule, start_timeout, stdio_concurrency, stdio_mode, timeout)"},
		{"unknown_server_key.yml",
			"testdata/bad/unknown_server_key.yml: servers.report.tiemout: unknown key; did you mean timeout? (known keys here: allow_destructive_calls, args, auth, auto_calls, call_schedule, call_timeout, calls, command, contracts, cwd, env, era, forbid, headers, inherit_env, issuer_check, restart_every, schedule, start_timeout, stdio_mode, timeout, tls, transport, url, watch_changes)"},
		{"unknown_tls_key.yml",
			"testdata/bad/unknown_tls_key.yml: servers.remote.tls.ca: unknown key; did you mean ca_file? (known keys here: ca_file, insecure_skip_verify)"},
		{"unknown_top_key.yml",
			"testdata/bad/unknown_top_key.yml: server: unknown key; did you mean servers? (known keys here: defaults, ignore, imports, inputs, lock, servers)"},
		{"url_without_scheme.yml",
			"testdata/bad/url_without_scheme.yml: servers.remote.url: must start with http:// or https://"},
		{"calls_bad.yml",
			"testdata/bad/calls_bad.yml: servers.report.calls.fetch_daily_report: expect: unknown key \"stauts\" (known keys: status, not_error_code, errorCode, requiredFields, maxRows, contains, notContains, jsonSchema)\ntestdata/bad/calls_bad.yml: servers.report.calls.list_report_dates: expect.status: want \"pass\" (the call must succeed), \"fail\" (it must be refused) or \"credentialAccepted\" (it must be answered, its input refused or not), got \"ok\""},
		{"calls_not_mapping.yml",
			"testdata/bad/calls_not_mapping.yml: servers.report.calls: expected auto, or a mapping of tool names to contracts ({input: {...}, expect: {...}}), got a list"},
		{"call_schedule_without_calls.yml",
			"testdata/bad/call_schedule_without_calls.yml: servers.report.call_schedule: applies to canary calls, and this server has none; add contracts:, calls: or calls: auto, or remove it"},
		{"contracts_missing.yml",
			"testdata/bad/contracts_missing.yml: servers.report.contracts: testdata/bad/absent.tools.json: cannot read it (no such file or directory); fix the path"},
		{"destructive_optin.yml",
			"testdata/bad/destructive_optin.yml: servers.report.allow_destructive_calls[0]: \"delete_report\" has no contract, so nothing calls it; remove it, or add a contract for it\ntestdata/bad/destructive_optin.yml: servers.report.allow_destructive_calls[1]: the contract of \"purge_cache\" does not say \"allowSideEffects\": true, which a tool that is not read-only needs as well; add it to the contract, or remove the opt-in"},
		{"zero_timeout.yml",
			"testdata/bad/zero_timeout.yml: servers.report.timeout: must be positive, got 0s"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			_, err := load(filepath.Join("testdata", "bad", tc.file))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			got := strings.ReplaceAll(err.Error(), abs, "testdata")
			if got != tc.want {
				t.Errorf("message\n got: %s\nwant: %s", got, tc.want)
			}
			for _, secret := range []string{"hunter2", "sk-live-123"} {
				if strings.Contains(got, secret) {
					t.Errorf("message carries the secret %q", secret)
				}
			}
		})
	}
	files, _ := filepath.Glob("testdata/bad/*.yml")
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s has no case in the table", f)
		}
	}
}

func TestLoadAppliesDefaults(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"imported": {"url": "https://x.example.com/mcp"}}}`)
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
defaults: {timeout: 3s, schedule: "*/5 * * * *", era: legacy, max_message_bytes: 1048576}
imports: [.mcp.json]
servers:
  own: {command: server}
  pinned: {command: server, timeout: 1s, era: modern, schedule: "@hourly"}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Defaults.MaxMessageBytes != 1<<20 || cfg.Defaults.Concurrency != 128 || cfg.Defaults.StdioConcurrency != 8 {
		t.Errorf("Defaults = %+v", cfg.Defaults)
	}
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		schedule string
		era      probe.Era
	}{
		{"own", 3 * time.Second, "*/5 * * * *", probe.EraLegacy},
		{"imported", 3 * time.Second, "*/5 * * * *", probe.EraLegacy},
		{"pinned", time.Second, "@hourly", probe.EraModern},
	} {
		s, _ := cfg.Server(tc.name)
		if s.Timeout != tc.timeout || s.Schedule != tc.schedule || s.Era != tc.era {
			t.Errorf("%s: Timeout=%s Schedule=%q Era=%s", tc.name, s.Timeout, s.Schedule, s.Era)
		}
	}
	if cfg.Lock != filepath.Join(dir, DefaultLockFile) {
		t.Errorf("Lock = %s", cfg.Lock)
	}
}

// defaults.inherit_env reaches every command server, imported ones too,
// unless a server says otherwise; URL servers have no environment to pass.
func TestLoadInheritEnvDefault(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"imported": {"command": "npx", "args": ["-y", "x"]}, "remote": {"url": "https://x.example.com/mcp"}}}`)
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
defaults: {inherit_env: true}
imports: [.mcp.json]
servers:
  own: {command: server}
  minimal: {command: server, inherit_env: false}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"own": true, "imported": true, "minimal": false, "remote": false} {
		if s, _ := cfg.Server(name); s.InheritEnv != want {
			t.Errorf("%s: InheritEnv %v, want %v", name, s.InheritEnv, want)
		}
	}
	if !cfg.Defaults.InheritEnv {
		t.Error("Defaults.InheritEnv not set")
	}
}

// TestLoadRelativePaths: a config is read the same from any working
// directory, and a ${file:...} path starts at the config's directory.
func TestLoadMissingFile(t *testing.T) {
	_, err := load(filepath.Join(t.TempDir(), "mcpwatch.yml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}

func TestLoadServerNamesWithDots(t *testing.T) {
	// koanf must not split "reports.v2" into nested keys.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), "servers:\n  reports.v2: {command: server, tiemout: 1s}\n")
	_, err := load(filepath.Join(dir, "mcpwatch.yml"))
	want := `servers."reports.v2".tiemout: unknown key; did you mean timeout?`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want it to contain %s", err, want)
	}
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), "servers:\n  reports.v2: {command: server}\n")
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Server("reports.v2"); !ok {
		t.Errorf("servers = %+v", cfg.Servers)
	}
}

package launch

// Configurations loaded (internal/config) and then built for a probe.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/testtool"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestLoadAuth(t *testing.T) {
	cfg, err := load("../config/testdata/auth.yml")
	if err != nil {
		t.Fatal(err)
	}
	td, _ := filepath.Abs("../config/testdata")
	lookup := mapLookup(nil)

	machine, _ := cfg.Server("machine")
	oc, err := OAuth(machine, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if oc.Grant != "client_credentials" || oc.ClientID != "mcpwatch" || oc.ClientSecret != "cs-fixture-value" ||
		oc.AuthMethod != "client_secret_post" || strings.Join(oc.Scopes, " ") != "mcp:read mcp:tools" ||
		oc.TokenURL != "https://auth.example.com/oauth/token" || oc.Server != "machine" {
		t.Errorf("machine = %+v", oc)
	}

	delegated, _ := cfg.Server("delegated")
	oc, err = OAuth(delegated, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if oc.RefreshToken != "rt-fixture-value" || oc.RefreshTokenFile != filepath.Join(td, "auth", "refresh-token") {
		t.Errorf("delegated = %+v", oc)
	}

	// The key file is missing: an error naming the key and the file.
	keyed, _ := cfg.Server("keyed")
	if _, err := OAuth(keyed, lookup); err == nil || !strings.Contains(err.Error(), "auth.private_key_file") || !strings.Contains(err.Error(), "key.pem") {
		t.Errorf("keyed: %v", err)
	}
	if errs := Check(cfg, lookup); len(errs) != 1 || !strings.Contains(errs[0].Error(), "private key file") {
		t.Errorf("Check = %v, want the missing key file", errs)
	}

	// Printed, no secret shows; references show as written.
	b, _ := json.Marshal(machine.Redacted())
	if strings.Contains(string(b), "cs-fixture-value") || !strings.Contains(string(b), `"client_secret":"${file:auth/client-secret}"`) {
		t.Errorf("redacted = %s", b)
	}
	inline := config.Server{Auth: &config.Auth{Type: "oauth", ClientSecret: "literal-secret-123"}}
	if b, _ := json.Marshal(inline.Redacted()); strings.Contains(string(b), "literal-secret-123") {
		t.Errorf("a literal secret printed: %s", b)
	}
}

func TestAuthForLogin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	if err := os.WriteFile(path, []byte("servers:\n  remote:\n    url: https://h/mcp\n    auth: {type: oauth, grant: refresh_token, refresh_token: \"${file:remote.refresh}\"}\n"+
		"  machine:\n    url: https://h/mcp\n    auth: {type: oauth, grant: client_credentials, client_id: x, client_secret: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	remote, _ := cfg.Server("remote")
	_, err = OAuth(remote, mapLookup(nil))
	if err == nil || !strings.Contains(err.Error(), "there is no refresh token at "+filepath.Join(dir, "remote.refresh")+" yet: run 'mcpwatch login remote'") {
		t.Errorf("OAuth before login: %v", err)
	}
	oc, err := LoginOAuth(remote, mapLookup(nil))
	if err != nil || oc.RefreshTokenFile != filepath.Join(dir, "remote.refresh") || oc.ClientID != "" || oc.RefreshToken != "" {
		t.Errorf("LoginOAuth = %+v, %v", oc, err)
	}
	machine, _ := cfg.Server("machine")
	if _, err := LoginOAuth(machine, mapLookup(nil)); err == nil || !strings.Contains(err.Error(), "uses grant client_credentials, which needs no sign-in") {
		t.Errorf("LoginOAuth of a machine client: %v", err)
	}
}

func TestSecretFileThatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "token")
	testtool.Mkfifo(t, fifo)
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO), not a regular file", "/dev/zero": "a device, not a regular file"} {
		err := testtool.Within(t, "Expand ${file:"+path+"}", func() error {
			_, err := expand.Expand("${file:"+path+"}", mapLookup(nil))
			return err
		})
		if want := "cannot read secret file " + path + ": " + kind + "; create it or fix the ${file:...} path"; err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}

	dir := t.TempDir()
	testtool.Mkfifo(t, filepath.Join(dir, "pipe"))
	path := filepath.Join(dir, "mcpwatch.yml")
	writeFile(t, path, "servers:\n  report:\n    command: /bin/true\n    env: {TOKEN: \"${file:pipe}\"}\n")
	cfg, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	problems := testtool.Within(t, "Config.Check", func() []error { return Check(cfg, mapLookup(nil)) })
	if len(problems) == 0 || !strings.Contains(problems[0].Error(), "a named pipe (FIFO), not a regular file") {
		t.Errorf("Check: %v", problems)
	}
}

func TestLoadMcpProbeConfig(t *testing.T) {
	servers, err := readClientConfig(t, "../config/testdata/clients/mcp-probe/mcp-probe.config.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 {
		t.Fatalf("%d servers", len(servers))
	}
	dd, local := servers[0], servers[1]
	dir, _ := filepath.Abs("../config/testdata/clients/mcp-probe")
	target, _, err := Resolve(dd, func(k string) (string, bool) { return "dd-secret", k == "DATADOG_MCP_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	if target.URL != "https://mcp.example.com/mcp" || target.Transport != "http" || target.Headers["Authorization"] != "Bearer dd-secret" {
		t.Errorf("datadog target: %+v", target)
	}
	if strings.Join(dd.Forbid, " ") != "delete_dashboard rotate_api_key" || strings.Join(dd.ExpectedTools, " ") != "logs_query" {
		t.Errorf("datadog: forbid %v expected %v", dd.Forbid, dd.ExpectedTools)
	}
	if len(dd.Contracts) != 1 || dd.Contracts[0].Tool != "logs_query" || dd.Contracts[0].Retry.Attempts != 3 ||
		len(dd.Contracts[0].Expect.RequiredFields) != 2 || *dd.Contracts[0].Expect.MaxRows != 100 ||
		dd.ContractsFile != filepath.Join(dir, "datadog.tools.json") || dd.CallSchedule != config.DefaultCallSchedule {
		t.Errorf("datadog contracts: %+v from %s", dd.Contracts, dd.ContractsFile)
	}
	if local.Command != "node" || strings.Join(local.Args, " ") != "./server.js --read-only" || local.Dir != dir {
		t.Errorf("local: %s %v in %s", local.Command, local.Args, local.Dir)
	}
}

func TestLoadClientConfig(t *testing.T) {
	td, _ := filepath.Abs("../config/testdata/clients")
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
			servers, err := readClientConfig(t, filepath.Join("../config/testdata/clients", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]probe.Target{}
			for _, s := range servers {
				if s.Source != filepath.Join(td, tc.file) || s.Timeout != config.BuiltinDefaults().Timeout || s.Schedule != config.BuiltinDefaults().Schedule {
					t.Errorf("%s: Source=%s Timeout=%s Schedule=%s", s.Name, s.Source, s.Timeout, s.Schedule)
				}
				target, _, err := Resolve(s, lookup)
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

func TestLoadFull(t *testing.T) {
	cfg, err := load("../config/testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	td, _ := filepath.Abs("../config/testdata")
	caPEM, err := os.ReadFile(filepath.Join(td, "certs", "ca.pem")) // read once, as the target is built
	if err != nil {
		t.Fatal(err)
	}
	vscode := filepath.Join(td, "clients", "vscode")
	claude := filepath.Join(td, "clients", "claude-code")

	if cfg.Path != filepath.Join(td, "full.yml") || cfg.Lock != filepath.Join(td, "mcp-tools.lock.json") {
		t.Errorf("Path=%s Lock=%s", cfg.Path, cfg.Lock)
	}
	wantDefaults := config.Defaults{Timeout: 10 * time.Second, StartTimeout: 3 * time.Minute, Schedule: "@every 30s", Concurrency: 16,
		StdioConcurrency: 4, Era: probe.EraAuto, MaxMessageBytes: 4 << 20, CallSchedule: "@every 10m", CallTimeout: 20 * time.Second,
		StdioMode: config.StdioLive, RestartEvery: 15 * time.Minute, LiveSessions: 8,
		IssuerInterval: 15 * time.Minute}
	if cfg.Defaults != wantDefaults {
		t.Errorf("Defaults = %+v", cfg.Defaults)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	// experimental is excluded; legacy-events is ignored; the optional
	// desktop import is absent.
	if got, want := strings.Join(names, " "), "github local-tools perplexity remote report report-cc report-remote"; got != want {
		t.Fatalf("servers = %s, want %s", got, want)
	}

	env := mapLookup(map[string]string{"TOKEN": "tok-1", "VSCODE_API_KEY": "pplx-1", "REPORT_API_TOKEN": "rep-1", "HOME": "/home/u"})
	cases := []struct {
		server   string
		target   probe.Target
		timeout  time.Duration
		schedule string
		forbid   []string
		source   string
	}{
		{"report", probe.Target{
			Command: filepath.Join(td, "bin", "reportserver"), Args: []string{"--log-level", "debug"},
			Env: map[string]string{"REPORT_API_TOKEN": "fixture-token", "REPORT_SCOPE": "full"},
			Dir: td, Transport: probe.TransportStdio, Era: probe.EraAuto,
		}, 5 * time.Second, "@every 15s", []string{"delete_*", "rotate_api_key"}, "full.yml"},
		{"remote", probe.Target{
			URL: "https://mcp.example.com/mcp", Transport: probe.TransportAuto,
			Headers: map[string]string{"Authorization": "Bearer tok-1"},
			CAFile:  filepath.Join(td, "certs", "ca.pem"), CA: caPEM, Era: probe.EraModern,
		}, 10 * time.Second, "@every 30s", nil, "full.yml"},
		{"report-cc", probe.Target{
			Command: "python3", Args: []string{"./report_server.py"},
			Env: map[string]string{"REPORT_API_TOKEN": "rep-1"},
			Dir: claude, Transport: probe.TransportStdio, Era: probe.EraAuto,
		}, 10 * time.Second, "@every 30s", nil, "clients/claude-code/.mcp.json"},
		{"report-remote", probe.Target{
			URL: "https://reports.example.com/mcp", Transport: probe.TransportHTTP,
			Headers: map[string]string{"Authorization": "Bearer rep-1"}, Era: probe.EraAuto,
		}, 10 * time.Second, "@every 30s", nil, "clients/claude-code/.mcp.json"},
		{"github", probe.Target{
			URL: "https://api.githubcopilot.com/mcp/", Transport: probe.TransportHTTP,
			Headers: map[string]string{"Authorization": "Bearer gh-fixture"}, Era: probe.EraAuto,
		}, 10 * time.Second, "@every 30s", nil, "clients/vscode/.vscode/mcp.json"},
		{"local-tools", probe.Target{
			Command: filepath.Join(vscode, "bin", "tools"), Args: []string{"--root", vscode},
			Dir: filepath.Join(vscode, "work"), Transport: probe.TransportStdio, Era: probe.EraAuto,
		}, 10 * time.Second, "@every 30s", nil, "clients/vscode/.vscode/mcp.json"},
	}
	for _, tc := range cases {
		t.Run(tc.server, func(t *testing.T) {
			s, ok := cfg.Server(tc.server)
			if !ok {
				t.Fatalf("no server %q", tc.server)
			}
			if s.Source != filepath.Join(td, tc.source) {
				t.Errorf("Source = %s", s.Source)
			}
			if s.Timeout != tc.timeout || s.Schedule != tc.schedule || !reflect.DeepEqual(s.Forbid, tc.forbid) {
				t.Errorf("Timeout=%s Schedule=%q Forbid=%q", s.Timeout, s.Schedule, s.Forbid)
			}
			got, _, err := Resolve(s, env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.target) {
				t.Errorf("Target\n got: %+v\nwant: %+v", got, tc.target)
			}
		})
	}
	if _, ok := cfg.Server("experimental"); ok {
		t.Error("excluded server experimental is watched")
	}
	if _, ok := cfg.Server("legacy-events"); ok || !reflect.DeepEqual(cfg.Ignore, []string{"legacy-events"}) {
		t.Errorf("ignored server legacy-events is watched, or Ignore = %q", cfg.Ignore)
	}
}

func TestLoadRelativePaths(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "etc", "secrets", "token"), "rel-token\n")
	ca, err := os.ReadFile(filepath.Join("../config/testdata", "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ca.pem"), string(ca))
	writeFile(t, filepath.Join(dir, "etc", "mcpwatch.yml"), `
lock: locks/tools.lock.json
servers:
  rel:
    command: ./bin/server
    args: [./data]
    cwd: work
    env: {TOKEN: "${file:secrets/token}"}
  bare: {command: python3}
  home: {command: "~/bin/server", cwd: "${HOME}/work"}
  remote:
    url: https://x.example.com/mcp
    tls: {ca_file: ../ca.pem}
`)
	t.Chdir(t.TempDir()) // somewhere else entirely
	cfg, err := load(filepath.Join(dir, "etc", "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(dir, "etc")
	if cfg.Lock != filepath.Join(etc, "locks", "tools.lock.json") {
		t.Errorf("Lock = %s", cfg.Lock)
	}
	lookup := mapLookup(map[string]string{"HOME": "/home/u"})
	for _, tc := range []struct {
		name, command, dir, token, ca string
		args                          []string
	}{
		{"rel", filepath.Join(etc, "bin", "server"), filepath.Join(etc, "work"), "rel-token", "", []string{"./data"}},
		{"bare", "python3", etc, "", "", nil},
		{"home", "/home/u/bin/server", "/home/u/work", "", "", nil},
		{"remote", "", "", "", filepath.Join(dir, "ca.pem"), nil},
	} {
		s, _ := cfg.Server(tc.name)
		target, _, err := Resolve(s, lookup)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if target.Command != tc.command || target.Dir != tc.dir || target.Env["TOKEN"] != tc.token ||
			target.CAFile != tc.ca || !reflect.DeepEqual(target.Args, tc.args) {
			t.Errorf("%s: %+v", tc.name, target)
		}
	}
}

func TestLoadDoesNotReadVariables(t *testing.T) {
	// Unset variables and absent secret files are a probe-time matter:
	// Load succeeds, Check reports them.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
servers:
  report:
    command: /bin/sh
    env: {TOKEN: "${MCPWATCH_TEST_SURELY_UNSET}", OTHER: "${file:/nonexistent/token}"}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Check(cfg, os.LookupEnv); len(errs) != 2 {
		t.Errorf("Check = %v, want 2 errors", errs)
	}
}

func TestClientFileByPathAsItsClient(t *testing.T) {
	dir := t.TempDir()
	gemini := filepath.Join(dir, ".gemini", "settings.json")
	writeFile(t, gemini, `{"mcpServers": {
		"remote": {"httpUrl": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer $MY_KEY"}},
		"local": {"command": "srv", "env": {"KEY": "$MY_KEY"}}}}`)
	servers, err := readClientConfig(t, gemini)
	if err != nil {
		t.Fatalf("a Gemini CLI file with httpUrl: %v", err)
	}
	lookup := mapLookup(map[string]string{"MY_KEY": "k-1"})
	for _, s := range servers {
		tgt, _, err := Resolve(s, lookup)
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
	servers, err = readClientConfig(t, windsurf)
	if err != nil || len(servers) != 1 || servers[0].URL != "https://mcp.linear.app/sse" {
		t.Errorf("a Windsurf file with a comment and serverUrl: %+v, %v", servers, err)
	}
}

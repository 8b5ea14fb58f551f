package launch

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
)

// Every credential a server is given is checked: an env or header value
// whose name says credential, and the auth: block's secrets. A reference
// without a default that expands to empty makes it missing, named and said
// why, never by value; ${VAR:-} may be empty; ${VAR:?message} must not be,
// and says the message. Values under other names are settings.
func TestResolveCredentials(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "token"), "a-token\n")
	writeFile(t, filepath.Join(dir, "emptied"), "")
	env := map[string]string{"GOOD": "s3cret-value", "EMPTY": "", "DIR": dir}
	tests := []struct {
		name    string
		server  config.Server
		missing map[string]string // credential -> part of why
		present []string
	}{
		{name: "a bare variable, empty: what CI gives an unset secret",
			server:  config.Server{Command: "x", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${EMPTY}", "GITHUB_HOST": "${EMPTY}"}},
			missing: map[string]string{"env:GITHUB_PERSONAL_ACCESS_TOKEN": "${EMPTY} is set but empty"}},
		{name: "a bare variable, unset: the same problem, the same state",
			server:  config.Server{Command: "x", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${NOT_SET_ANYWHERE}"}},
			missing: map[string]string{"env:GITHUB_PERSONAL_ACCESS_TOKEN": "${NOT_SET_ANYWHERE} is not set"}},
		{name: "unset in a header and in a flag's value, through ${env:VAR}",
			server: config.Server{URL: "https://x.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:NOT_SET_ANYWHERE}"},
				Args: []string{"--api-key=${NOT_SET_ANYWHERE}"}},
			missing: map[string]string{"header:Authorization": "${NOT_SET_ANYWHERE} is not set", "arg:--api-key": "${NOT_SET_ANYWHERE} is not set"}},
		{name: "an unresolved VS Code input",
			server:  config.Server{Command: "x", Env: map[string]string{"PERPLEXITY_API_KEY": "${input:perplexity-key}"}},
			missing: map[string]string{"env:PERPLEXITY_API_KEY": "input perplexity-key is not resolved"}},
		{name: "an emptied token file",
			server:  config.Server{Command: "x", Env: map[string]string{"REPORT_API_TOKEN": "${file:${DIR}/emptied}"}},
			missing: map[string]string{"env:REPORT_API_TOKEN": "/emptied (${file:...}) is empty"}},
		{name: "a bearer header whose token is empty",
			server:  config.Server{URL: "https://x.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${EMPTY}", "X-Client": "${EMPTY}"}},
			missing: map[string]string{"header:Authorization": "${EMPTY} is set but empty"}},
		{name: "written empty: a placeholder never filled in",
			server:  config.Server{Command: "x", Env: map[string]string{"BRAVE_API_KEY": "", "LOG_LEVEL": ""}},
			missing: map[string]string{"env:BRAVE_API_KEY": "it is written empty"}},
		{name: "${VAR:-} may be empty",
			server:  config.Server{Command: "x", Env: map[string]string{"API_KEY": "${EMPTY:-}"}},
			present: []string{"env:API_KEY"}},
		{name: "${VAR:?message} must not be",
			server:  config.Server{Command: "x", Env: map[string]string{"API_KEY": "${EMPTY:?create one at https://example.com/keys}"}},
			missing: map[string]string{"env:API_KEY": "variable EMPTY is empty: create one at https://example.com/keys"}},
		{name: "${VAR:?message} unset",
			server:  config.Server{Command: "x", Env: map[string]string{"API_KEY": "${NOT_SET_AT_ALL:?set it in CI}"}},
			missing: map[string]string{"env:API_KEY": "variable NOT_SET_AT_ALL is not set: set it in CI"}},
		{name: "present ones",
			server:  config.Server{Command: "x", Env: map[string]string{"API_KEY": "${GOOD}", "SLACK_BOT_TOKEN": "${file:${DIR}/token}", "LITERAL_TOKEN": "written-in-the-file"}},
			present: []string{"env:API_KEY", "env:LITERAL_TOKEN", "env:SLACK_BOT_TOKEN"}},
		{name: "a flag's value in args, both spellings (Stripe's --api-key=${STRIPE_SECRET_KEY})",
			server:  config.Server{Command: "x", Args: []string{"--api-key=${EMPTY}", "--token", "${EMPTY}", "--access-token", "${GOOD}", "--port", "${EMPTY}"}},
			missing: map[string]string{"arg:--api-key": "${EMPTY} is set but empty", "arg:--token": "${EMPTY} is set but empty"},
			present: []string{"arg:--access-token"}},
		{name: "a URL's userinfo in args, and a URL's api_key= query",
			server:  config.Server{Command: "x", Args: []string{"postgresql://mcp:${EMPTY}@127.0.0.1/app"}},
			missing: map[string]string{"arg:userinfo": "${EMPTY} is set but empty"}},
		{name: "a server URL's api_key= query",
			server:  config.Server{URL: "https://x.example.com/mcp?api_key=${EMPTY}&mode=${EMPTY}"},
			missing: map[string]string{"url:api_key": "${EMPTY} is set but empty"}},
		{name: "an auth: block's secret",
			server:  config.Server{URL: "https://x.example.com/mcp", Auth: &config.Auth{Type: "oauth", Grant: "client_credentials", ClientID: "c", ClientSecret: "${EMPTY}"}},
			missing: map[string]string{"auth:client_secret": "${EMPTY} is set but empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.server.Name = "s"
			_, given, err := Resolve(tc.server, mapLookup(env))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			var present []string
			for _, g := range given {
				if g.Present {
					present = append(present, g.Credential)
					continue
				}
				want, ok := tc.missing[g.Credential]
				if !ok || !strings.Contains(g.Why, want) {
					t.Errorf("%s missing (%q), want %q", g.Credential, g.Why, want)
				}
				if strings.Contains(g.Why, "s3cret-value") || strings.Contains(g.Why, "a-token") {
					t.Errorf("why %q carries a value", g.Why)
				}
			}
			if len(Missing(given)) != len(tc.missing) || !slices.Equal(present, tc.present) {
				t.Errorf("given %+v, want missing %v and present %v", given, tc.missing, tc.present)
			}
		})
	}
}

// An unset variable outside a credential's value stays a configuration
// error (a setting, a command, the path of a secret file: a wiring fault);
// ${VAR:?message} outside a credential is an error carrying the message.
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		server config.Server
		kind   error
		msg    string
	}{
		{config.Server{Name: "s", Command: "x", Env: map[string]string{"GITHUB_HOST": "${NOT_SET_ANYWHERE}"}}, expand.ErrUnsetVariable, "variable NOT_SET_ANYWHERE is not set"},
		{config.Server{Name: "s", Command: "x", Env: map[string]string{"GITHUB_TOKEN": "${file:${NOT_SET_ANYWHERE}/token}"}}, expand.ErrUnsetVariable, "variable NOT_SET_ANYWHERE is not set"},
		{config.Server{Name: "s", Command: "x", Args: []string{"--dir", "${NOT_SET_ANYWHERE:?name the directory to serve}"}}, expand.ErrRequired, "name the directory to serve"},
	} {
		_, _, err := Resolve(tc.server, mapLookup(nil))
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Resolve: %v, want %v saying %q", err, tc.kind, tc.msg)
		}
	}
}

// config check names a missing credential, and the fix.
func TestCheckReportsMissingCredentials(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{{Name: "github", Source: "/p/.mcp.json", Command: "true",
		Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}}}}
	lookup := mapLookup(map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "", "PATH": "/usr/bin:/bin"})
	var found bool
	for _, err := range Check(cfg, lookup) {
		if strings.Contains(err.Error(), `server "github" (/p/.mcp.json) env.GITHUB_PERSONAL_ACCESS_TOKEN: credential missing: ${GITHUB_PERSONAL_ACCESS_TOKEN} is set but empty`) {
			found = true
		}
	}
	if !found {
		t.Errorf("config check does not name the empty credential: %v", Check(cfg, lookup))
	}
	// Unset, config check still says so, as the same missing credential.
	problems := Check(cfg, mapLookup(map[string]string{"PATH": "/usr/bin:/bin"}))
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), `env.GITHUB_PERSONAL_ACCESS_TOKEN: credential missing: ${GITHUB_PERSONAL_ACCESS_TOKEN} is not set; a probe would fail with credential_missing`) {
		t.Errorf("config check of an unset credential: %v", problems)
	}
}

// A secret reference in args is on every local user's screen through
// /proc/PID/cmdline: config check warns, naming the argument, never a
// value; a setting in args is no secret.
func TestWarningsSecretInArgs(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{
		{Name: "stripe", Source: "/p/.mcp.json", Command: "npx", Args: []string{"-y", "@stripe/mcp", "--api-key=${STRIPE_SECRET_KEY}"}},
		{Name: "db", Source: "/p/.mcp.json", Command: "x", Args: []string{"--dsn", "postgresql://u:${PW}@h/db", "--token-file", "${file:/run/t}"}},
		{Name: "fs", Source: "/p/.mcp.json", Command: "x", Args: []string{"--root", "${HOME}", "--port=${PORT}"}},
	}}
	got := cfg.Warnings()
	want := []string{`server "stripe" (/p/.mcp.json) args[2]: --api-key=${STRIPE_SECRET_KEY} puts a secret`,
		`server "db" (/p/.mcp.json) args[1]:`, `server "db" (/p/.mcp.json) args[3]:`}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("warning %q, want it to start %q", got[i], w)
		}
	}
}

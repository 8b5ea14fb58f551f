package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// loginFixture is an MCP test server behind a test authorization server
// that offers the authorization code grant and rotates refresh tokens.
func loginFixture(t *testing.T, cfg probetest.AuthConfig) (*probetest.AuthServer, string) {
	t.Helper()
	cfg.Grants = []string{"authorization_code", "refresh_token"}
	if cfg.AuthMethods == nil {
		cfg.AuthMethods = []string{probetest.AuthNone}
	}
	cfg.Rotate = true
	as := probetest.NewAuthServer(cfg)
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	as.SetURL(asSrv.URL)
	kit := probetest.NewServer(probetest.Config{})
	t.Cleanup(kit.Close)
	mcp := httptest.NewServer(as.Protect(kit))
	t.Cleanup(mcp.Close)
	return as, mcp.URL + "/mcp"
}

// clientDocument serves a Client ID Metadata Document over https and
// returns its URL and a client that trusts it.
func clientDocument(t *testing.T) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewTLSServer(nil)
	t.Cleanup(srv.Close)
	docURL := srv.URL + "/mcpwatch/client.json"
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": "mcpwatch",
			"redirect_uris": []string{"http://127.0.0.1/callback"}, "token_endpoint_auth_method": "none"})
	})
	return docURL, srv.Client()
}

// mcpwatch login, end to end, in each client identity mode: the built
// binary signs in through a scripted $BROWSER, stores the refresh token
// (0600), and serve then probes with it, rotating it, across a restart.
// No token or client secret shows in any output.
func TestLoginThenServe(t *testing.T) {
	t.Parallel()
	docURL, docClient := clientDocument(t)
	for _, tc := range []struct {
		name   string
		as     probetest.AuthConfig
		auth   map[string]any // beyond type, grant and refresh_token
		flags  []string
		client string // what login says of the client
		kept   bool   // a registration file beside the refresh token
	}{
		{name: "configured client", as: probetest.AuthConfig{ClientID: "pre-registered", ClientSecret: "pre-registered-secret-1", AuthMethods: []string{probetest.AuthPost}},
			auth: map[string]any{"client_id": "pre-registered", "client_secret": "pre-registered-secret-1"}, client: "pre-registered (the configured client)"},
		{name: "client ID metadata document", as: probetest.AuthConfig{CIMD: true, CIMDClient: docClient},
			flags: []string{"--client-metadata-url", docURL}, client: docURL + " (mcpwatch's Client ID Metadata Document)", kept: true},
		{name: "dynamic client registration", as: probetest.AuthConfig{Registration: true, RequiredScope: "mcp:read"},
			client: "(a client registered for mcpwatch (RFC 7591))", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as, url := loginFixture(t, tc.as)
			dir := t.TempDir()
			rtFile := filepath.Join(dir, "remote.refresh")
			auth := map[string]any{"type": "oauth", "grant": "refresh_token", "refresh_token": "${file:remote.refresh}"}
			for k, v := range tc.auth {
				auth[k] = v
			}
			config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
				"remote": map[string]any{"url": url, "transport": "http", "schedule": "@every 1h", "auth": auth},
			}})
			var outputs []string
			r := runBin(t, dir, map[string]string{"BROWSER": testBrowser(t)}, append([]string{"login", "-c", config, "remote"}, tc.flags...)...)
			outputs = append(outputs, r.stdout, r.stderr)
			if r.code != exitOK {
				t.Fatalf("login: %s", r)
			}
			t.Logf("mcpwatch login -c mcpwatch.yml remote %s:\n%s", strings.Join(tc.flags, " "), r.stdout)
			assertContains(t, "login's output", r.stdout, "signed in: remote, at authorization server http://127.0.0.1:", tc.client,
				"refresh token  stored in "+rtFile+" (mode 0600)", "probe          ok: 2 tools with the new token")
			assertContains(t, "login's instructions", r.stderr, "Sign in to remote in a browser", "code_challenge_method=S256")
			if fi, err := os.Lstat(rtFile); err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
				t.Fatalf("refresh token file: %v, %v; want a regular file of mode 0600", fi, err)
			}
			reg := oauth.RegistrationFile(rtFile)
			if fi, err := os.Lstat(reg); tc.kept != (err == nil) || (err == nil && fi.Mode().Perm() != 0o600) {
				t.Errorf("registration file: %v, %v; want kept=%v, mode 0600", fi, err, tc.kept)
			}
			if tc.kept && !strings.Contains(r.stdout, "client kept    in "+reg+" (mode 0600)") {
				t.Errorf("login does not say where the client is kept:\n%s", r.stdout)
			}
			stored := readToken(t, rtFile)

			for _, round := range []string{"first start", "restart"} {
				base, logs := serveLogged(t, nil, "-c", config)
				if st := firstProbe(t, base, "remote"); st.State != "ok" {
					t.Fatalf("%s: remote is %s (%s: %s), want ok with the stored refresh token", round, st.State, st.Reason, st.Error)
				}
				now := readToken(t, rtFile)
				if now == stored || !as.RefreshTokenValid(now) {
					t.Errorf("%s: the refresh token was not rotated and written back", round)
				}
				stored = now
				outputs = append(outputs, scrape(t, base+"/api/v1/servers/remote"), scrape(t, base+"/metrics"), logs.String())
			}
			for _, out := range outputs {
				for _, s := range as.Issued() {
					if strings.Contains(out, s) {
						t.Errorf("a token or secret appears in an output: %.40q...", s)
					}
				}
			}
		})
	}
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Denied consent fails by name, exit 1, and stores nothing; an answer
// with another state is ignored, and the login waits for its own until
// --timeout; an ad-hoc --url login works as a configured one does.
func TestLoginFailuresAndAdHoc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		consent probetest.Consent
		timeout string // the login's --timeout
		want    string
	}{
		{"denied", probetest.ConsentDeny, "5m", "login, authorization: consent was denied in the browser"},
		// The only answer has another state: ignored, so the login waits
		// for its own until --timeout.
		{"wrong state", probetest.ConsentWrongState, "3s", "FAILED (timeout): login for --url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := loginFixture(t, probetest.AuthConfig{Registration: true, Consent: tc.consent})
			dir := t.TempDir()
			r := runBin(t, dir, map[string]string{"BROWSER": testBrowser(t)}, "login", "--timeout", tc.timeout, "--url", url, "--oauth-refresh-token", "${file:rt}")
			if r.code != exitFailed || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("login: %s\nwant exit 1 and %q", r, tc.want)
			}
			if tc.consent == probetest.ConsentWrongState && !strings.Contains(r.stdout, "requests to the redirect URI with another state than this sign-in's were ignored: 1") {
				t.Errorf("login does not say it ignored an answer with another state:\n%s", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "rt")); err == nil {
				t.Error("a failed login stored a refresh token")
			}
		})
	}
	t.Run("ad hoc", func(t *testing.T) {
		t.Parallel()
		_, url := loginFixture(t, probetest.AuthConfig{Registration: true})
		dir := t.TempDir()
		r := runBin(t, dir, map[string]string{"BROWSER": testBrowser(t)}, "login", "--url", url, "--transport", "http", "--oauth-refresh-token", "${file:rt}")
		if r.code != exitOK || !strings.Contains(r.stdout, "signed in: --url "+url) {
			t.Fatalf("login --url: %s", r)
		}
		if fi, err := os.Stat(filepath.Join(dir, "rt")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("refresh token file: %v %v", fi, err)
		}
		// probe refreshes as the client login kept, with no client id.
		r = runBin(t, dir, nil, "probe", "--url", url, "--transport", "http", "--oauth-refresh-token", "${file:rt}")
		if r.code != exitOK || !strings.Contains(r.stdout, "ok: ") {
			t.Errorf("probe with the stored refresh token: %s", r)
		}
	})
}

func TestLoginUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"machine": map[string]any{"url": "https://h.example/mcp", "auth": map[string]any{"type": "oauth", "grant": "client_credentials", "client_id": "x", "client_secret": "s"}},
		"local":   map[string]any{"command": "/bin/true"},
		"static":  map[string]any{"url": "https://h.example/mcp"},
	}})
	assertUsageErrors(t, dir, nil, []usageCase{
		{args: []string{"login"}, msg: "give the SERVER to sign in for, or --url"},
		{args: []string{"login", "a", "b"}, msg: `unexpected argument "b"`},
		{args: []string{"login", "-c", config, "nope"}, msg: `has no server "nope" (servers with an auth: block: machine)`},
		{args: []string{"login", "--url", "https://h.example/mcp"}, msg: "--url needs --oauth-refresh-token '${file:PATH}'"},
		{args: []string{"login", "-c", config, "machine", "--header", "A: b"}, msg: "--header applies to --url only"},
		{args: []string{"login", "--url", "https://h.example/mcp", "x"}, msg: "give either SERVER or --url, not both"},
		{args: []string{"login", "--redirect-port", "70000", "x"}, msg: "--redirect-port 70000"},
	})
	for server, want := range map[string]string{
		"machine": `server "machine" uses grant client_credentials, which needs no sign-in`,
		"local":   `server "local" is a command`,
		"static":  `server "static" has no auth: block`,
	} {
		r := runBin(t, dir, nil, "login", "-c", config, server)
		if r.code != exitConfig || !strings.Contains(r.stderr, want) {
			t.Errorf("login %s: %s\nwant exit 78 and %q", server, r, want)
		}
	}
	r := runBin(t, dir, nil, "login", "--help")
	if r.code != exitOK {
		t.Errorf("login --help: %s", r)
	}
	assertContains(t, "login --help", r.stdout, "mcpwatch login [flags] SERVER", "Client ID Metadata", "--no-browser", "--redirect-port", "Exit codes", "--timeout")
}

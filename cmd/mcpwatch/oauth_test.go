package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// oauthFixture is an MCP test server behind a test authorization server
// that rotates refresh tokens, and a second MCP server that takes any
// bearer token (a static JWT here).
type oauthFixture struct {
	as                *probetest.AuthServer
	mcpURL, staticURL string
}

func newOAuthFixture(t *testing.T, cfg probetest.AuthConfig) *oauthFixture {
	t.Helper()
	as := probetest.NewAuthServer(cfg)
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	as.SetURL(asSrv.URL)
	kit := probetest.NewServer(probetest.Config{})
	t.Cleanup(kit.Close)
	mcp := httptest.NewServer(as.Protect(kit))
	t.Cleanup(mcp.Close)
	static := probetest.NewServer(probetest.Config{})
	t.Cleanup(static.Close)
	staticSrv := httptest.NewServer(static)
	t.Cleanup(staticSrv.Close)
	return &oauthFixture{as: as, mcpURL: mcp.URL + "/mcp", staticURL: staticSrv.URL + "/mcp"}
}

// staticJWT is a bearer token that expires in d (signed with a key nobody
// checks: mcpwatch reads its exp without verifying).
func staticJWT(t *testing.T, d time.Duration) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: "ci-bot", ExpiresAt: jwt.NewNumericDate(time.Now().Add(d)),
	}).SignedString([]byte("test-signing-key-unused"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The refresh token an MCP client stored is rotated by the authorization
// server at every refresh; serve writes the new one back (mode 0600), so a
// restart refreshes with it, not with the one the server has already
// revoked. A revoked grant then fails by name and is counted; a static JWT
// bearer's expiry is exported and shown. No token appears in any output.
func TestServeOAuthRefreshSurvivesRestart(t *testing.T) {
	t.Parallel()
	fx := newOAuthFixture(t, probetest.AuthConfig{
		ClientID: "mcpwatch-test", AuthMethods: []string{probetest.AuthNone},
		RefreshToken: "rt-initial-value", Rotate: true, RefreshExpiresIn: 2 * 86400,
		RequiredScope: "mcp:read",
	})
	dir := t.TempDir()
	rtFile := filepath.Join(dir, "remote.refresh")
	if err := os.WriteFile(rtFile, []byte("rt-initial-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bearer := staticJWT(t, 48*time.Hour)
	jwtFile := filepath.Join(dir, "static.jwt")
	if err := os.WriteFile(jwtFile, []byte(bearer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"remote": map[string]any{
			"url": fx.mcpURL, "transport": "http", "schedule": "@every 1h",
			"auth": map[string]any{"type": "oauth", "grant": "refresh_token", "client_id": "mcpwatch-test",
				"refresh_token": "${file:" + rtFile + "}"},
		},
		"static": map[string]any{
			"url": fx.staticURL, "transport": "http", "schedule": "@every 1h",
			"headers": map[string]any{"Authorization": "Bearer ${file:" + jwtFile + "}"},
		},
	}})
	var outputs []string
	collect := func(base string, logs *logLines) {
		for _, p := range []string{"/metrics", "/", "/api/v1/servers", "/server/remote", "/server/static"} {
			outputs = append(outputs, scrape(t, base+p))
		}
		outputs = append(outputs, logs.String())
	}
	readToken := func() string {
		b, err := os.ReadFile(rtFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}

	var firstRotation string
	t.Run("first start", func(t *testing.T) {
		base, logs := serveLogged(t, nil, "-c", config)
		if st := firstProbe(t, base, "remote"); st.State != "ok" {
			t.Fatalf("remote is %s (%s: %s), want ok", st.State, st.Reason, st.Error)
		}
		firstRotation = readToken()
		if firstRotation == "rt-initial-value" || !fx.as.RefreshTokenValid(firstRotation) {
			t.Fatalf("the refresh token file holds %q, not the rotated token", firstRotation)
		}
		if fi, err := os.Stat(rtFile); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("refresh token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
		}
		firstProbe(t, base, "static")
		m := scrape(t, base+"/metrics")
		for _, want := range []string{
			`mcpwatch_credential_expiry_timestamp_seconds{credential="oauth_refresh_token",server="remote"} `,
			`mcpwatch_credential_expiry_timestamp_seconds{credential="oauth_access_token",server="remote"} `,
			`mcpwatch_credential_expiry_timestamp_seconds{credential="header:Authorization",server="static"} `,
			`mcpwatch_credential_last_refresh_success_timestamp_seconds{server="remote"} `,
			`mcpwatch_credential_refresh_failures_total{reason="invalid_grant",server="remote"} 0`,
		} {
			if !strings.Contains(m, "\n"+want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if api := scrape(t, base+"/api/v1/servers/remote"); !strings.Contains(api, `"credential": "oauth_refresh_token"`) {
			t.Errorf("the JSON API has no credential expiry: %s", api)
		}
		page := scrape(t, base+"/")
		assertContains(t, "the status page", page, "Credential expires in", `class="cred-warning"`, "oauth_refresh_token", `class="cred-warning"`, "header:Authorization")
		collect(base, logs)
	})
	if t.Failed() {
		return
	}

	t.Run("restart", func(t *testing.T) {
		base, logs := serveLogged(t, nil, "-c", config)
		if st := firstProbe(t, base, "remote"); st.State != "ok" {
			t.Fatalf("after a restart remote is %s (%s: %s), want ok with the written-back refresh token", st.State, st.Reason, st.Error)
		}
		if now := readToken(); now == firstRotation || !fx.as.RefreshTokenValid(now) {
			t.Errorf("the refresh token was not rotated again: %q", now)
		}
		collect(base, logs)
	})

	t.Run("revoked grant", func(t *testing.T) {
		fx.as.RevokeRefreshTokens()
		base, logs := serveLogged(t, nil, "-c", config)
		st := firstProbe(t, base, "remote")
		if st.State == "ok" || st.Reason != "unauthorized" || !strings.Contains(st.Error, "invalid_grant") || !strings.Contains(st.Error, rtFile) {
			t.Errorf("remote is %s (%s: %s), want unauthorized naming invalid_grant and the file", st.State, st.Reason, st.Error)
		}
		if m := scrape(t, base+"/metrics"); !hasSample(m, `mcpwatch_credential_refresh_failures_total{reason="invalid_grant",server="remote"} 1`) {
			t.Errorf("/metrics lacks the invalid_grant failure:\n%s", grepLines(m, "mcpwatch_credential"))
		}
		collect(base, logs)
	})

	secrets := append(fx.as.Issued(), bearer)
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("a token value appears in an output: %.60q...", s)
			}
		}
		if strings.Contains(out, strings.Split(bearer, ".")[1]) {
			t.Error("the static JWT's claims appear in an output")
		}
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// mcpwatch probe --oauth-*: a machine client with client credentials, by
// client_secret_post; the secret comes from a file and never shows.
func TestProbeOAuthFlags(t *testing.T) {
	t.Parallel()
	fx := newOAuthFixture(t, probetest.AuthConfig{
		ClientID: "ci", ClientSecret: "client-secret-from-file", AuthMethods: []string{probetest.AuthPost},
		ScopesSupported: []string{"mcp:read"}, RequiredScope: "mcp:read", NoChallengeScope: true,
	})
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("client-secret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"text", "json"} {
		code, stdout, stderr := runCLI(t, nil, "probe", "--format", output, "--url", fx.mcpURL,
			"--oauth-client-id", "ci", "--oauth-client-secret", "${file:"+secretFile+"}")
		if code != exitOK {
			t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
		}
		if output == "text" {
			assertContains(t, "the probe output", stdout, "ok:", "oauth_access_token", "renewed by mcpwatch")
		}
		for _, s := range append(fx.as.Issued(), "client-secret-from-file") {
			if strings.Contains(stdout+stderr, s) {
				t.Errorf("a secret in the %s output", output)
			}
		}
	}
	if r := fx.as.Requests(); len(r) != 2 || r[0].AuthMethod != probetest.AuthPost || r[0].Scope != "mcp:read" {
		t.Errorf("token requests = %+v, want client_secret_post with scopes_supported", r)
	}

	// Usage errors.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-client-secret", "x"}, "--oauth-client-id is required"},
		{[]string{"--oauth-client-id", "ci", "--oauth-refresh-token", "plain"}, "--oauth-refresh-token: give '${file:PATH}'"},
		{[]string{"--oauth-client-id", "ci", "--oauth-client-secret", "x", "--header", "Authorization: Bearer y"}, "both set"},
	} {
		code, _, stderr := runCLI(t, nil, append([]string{"probe", "--url", fx.mcpURL}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %s; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// config check prints an auth: block with its secrets redacted.
func TestConfigCheckRedactsAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"remote": map[string]any{"url": "https://mcp.example.com/mcp", "auth": map[string]any{
			"type": "oauth", "grant": "client_credentials", "client_id": "ci", "client_secret": "literal-client-secret"}},
	}})
	for _, format := range []string{"text", "json"} {
		_, stdout, stderr := runCLI(t, nil, "config", "check", "-c", config, "--format", format)
		if strings.Contains(stdout+stderr, "literal-client-secret") {
			t.Errorf("config check --format %s prints the client secret:\n%s", format, stdout)
		}
		if !strings.Contains(stdout, "redacted") {
			t.Errorf("config check --format %s shows no redacted secret:\n%s%s", format, stdout, stderr)
		}
	}
}

// A bearer JWT whose exp is 1e308 is read as expiring in about 100 years:
// check's JSON output and its receipt are written (they failed to encode a
// time past the year 9999), and the expiry they show is that far.
func TestAbsurdJWTExpiryIsClamped(t *testing.T) {
	t.Parallel()
	fx := newOAuthFixture(t, probetest.AuthConfig{})
	dir := t.TempDir()
	// {"alg":"none"} . {"sub":"ci","exp":1e308} . no signature
	bearer := "eyJhbGciOiJub25lIn0.eyJzdWIiOiJjaSIsImV4cCI6MWUzMDh9."
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"static": map[string]any{"url": fx.staticURL, "transport": "http", "headers": map[string]any{"Authorization": "Bearer " + bearer}},
	}})
	lock := writeJSON(t, dir, "mcp-tools.lock.json", map[string]any{"static": []string{"fetch_daily_report", "list_report_dates"}})
	receipt := filepath.Join(dir, "receipt.json")
	code, stdout, stderr := runCLI(t, nil, "check", "-c", config, "-l", lock, "--format", "json", "--receipt", receipt)
	if code != exitOK {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	for name, text := range map[string]string{"stdout": stdout, "receipt": string(readFile(t, receipt))} {
		i := strings.Index(text, `"header:Authorization"`)
		if i < 0 {
			t.Errorf("the %s names no header credential:\n%s", name, text)
			continue
		}
		year := time.Now().Year() + 100
		if !strings.Contains(text[i:], fmt.Sprintf(`"%d-`, year)) && !strings.Contains(text[i:], fmt.Sprintf(`"%d-`, year-1)) {
			t.Errorf("the %s's expiry is not about 100 years out:\n%s", name, text[i:min(len(text), i+200)])
		}
	}
}

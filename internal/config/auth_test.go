package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAuth(t *testing.T) {
	cfg, err := load("testdata/auth.yml")
	if err != nil {
		t.Fatal(err)
	}
	td, _ := filepath.Abs("testdata")
	lookup := mapLookup(nil)

	machine, _ := cfg.Server("machine")
	oc, err := machine.OAuth(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if oc.Grant != "client_credentials" || oc.ClientID != "mcpwatch" || oc.ClientSecret != "cs-fixture-value" ||
		oc.AuthMethod != "client_secret_post" || strings.Join(oc.Scopes, " ") != "mcp:read mcp:tools" ||
		oc.TokenURL != "https://auth.example.com/oauth/token" || oc.Server != "machine" {
		t.Errorf("machine = %+v", oc)
	}

	delegated, _ := cfg.Server("delegated")
	oc, err = delegated.OAuth(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if oc.RefreshToken != "rt-fixture-value" || oc.RefreshTokenFile != filepath.Join(td, "auth", "refresh-token") {
		t.Errorf("delegated = %+v", oc)
	}

	// The key file is missing: an error naming the key and the file.
	keyed, _ := cfg.Server("keyed")
	if _, err := keyed.OAuth(lookup); err == nil || !strings.Contains(err.Error(), "auth.private_key_file") || !strings.Contains(err.Error(), "key.pem") {
		t.Errorf("keyed: %v", err)
	}
	if errs := cfg.Check(lookup); len(errs) != 1 || !strings.Contains(errs[0].Error(), "private key file") {
		t.Errorf("Check = %v, want the missing key file", errs)
	}

	// Printed, no secret shows; references show as written.
	b, _ := json.Marshal(machine.Redacted())
	if strings.Contains(string(b), "cs-fixture-value") || !strings.Contains(string(b), `"client_secret":"${file:auth/client-secret}"`) {
		t.Errorf("redacted = %s", b)
	}
	inline := Server{Auth: &Auth{Type: "oauth", ClientSecret: "literal-secret-123"}}
	if b, _ := json.Marshal(inline.Redacted()); strings.Contains(string(b), "literal-secret-123") {
		t.Errorf("a literal secret printed: %s", b)
	}
}

func TestAuthErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"url: https://h/mcp\n    auth: {type: basic}", `servers.s.auth.type: "basic" is not an auth type; use oauth`},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: password, client_id: x}", `servers.s.auth.grant: "password" is not a grant`},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: client_credentials, client_id: x}", "servers.s.auth: grant client_credentials needs client_secret or private_key_file"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: client_credentials, client_secret: s}", "servers.s.auth.client_id: is required"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: refresh_token, client_id: x}", "servers.s.auth.refresh_token: is required for grant refresh_token: write refresh_token: \"${file:PATH}\", and run 'mcpwatch login s'"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: refresh_token, client_secret: x, refresh_token: \"${file:rt}\"}", "servers.s.auth.client_id: is required with a client secret or key"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: refresh_token, client_id: x, refresh_token: \"${RT}\"}", "servers.s.auth.refresh_token: must be a file reference"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: client_credentials, client_id: x, client_secret: s, scope: a}", "servers.s.auth.scope: unknown key; did you mean scopes?"},
		{"url: https://h/mcp\n    headers: {Authorization: Bearer x}\n    auth: {type: oauth, grant: client_credentials, client_id: x, client_secret: s}", "servers.s.headers.Authorization: is set together with auth:"},
		{"command: /bin/true\n    auth: {type: oauth, grant: client_credentials, client_id: x, client_secret: s}", "servers.s.auth: applies only to url servers"},
		{"url: https://h/mcp\n    auth: {type: oauth, grant: client_credentials, client_id: x, client_secret: s, auth_method: tls}", `servers.s.auth.auth_method: "tls" is not a client authentication method`},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "mcpwatch.yml")
		if err := os.WriteFile(path, []byte("servers:\n  s:\n    "+tc.yaml+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "Bearer x") {
			t.Errorf("a header value in an error: %v", err)
		}
	}
}

// Grant refresh_token without client_id is the client mcpwatch login sets
// up; a refresh token file that is not there yet says to run login; login
// itself reads the file's path, not the file.
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
	_, err = remote.OAuth(mapLookup(nil))
	if err == nil || !strings.Contains(err.Error(), "there is no refresh token at "+filepath.Join(dir, "remote.refresh")+" yet: run 'mcpwatch login remote'") {
		t.Errorf("OAuth before login: %v", err)
	}
	oc, err := remote.LoginOAuth(mapLookup(nil))
	if err != nil || oc.RefreshTokenFile != filepath.Join(dir, "remote.refresh") || oc.ClientID != "" || oc.RefreshToken != "" {
		t.Errorf("LoginOAuth = %+v, %v", oc, err)
	}
	machine, _ := cfg.Server("machine")
	if _, err := machine.LoginOAuth(mapLookup(nil)); err == nil || !strings.Contains(err.Error(), "uses grant client_credentials, which needs no sign-in") {
		t.Errorf("LoginOAuth of a machine client: %v", err)
	}
}

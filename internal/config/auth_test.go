package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

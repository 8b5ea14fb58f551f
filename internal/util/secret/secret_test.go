package secret

import (
	"slices"
	"testing"
)

func TestIsCredentialName(t *testing.T) {
	credentials := []string{
		// env variables
		"GITHUB_TOKEN", "GITHUB_PERSONAL_ACCESS_TOKEN", "REPORT_API_TOKEN", "API_KEY", "APIKEY", "OPENAI_API_KEY",
		"AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "DB_PASSWD", "PGPASSWORD", "PG_PASS", "MYSQL_PWD", "REPORT_PIN",
		"GITLAB_PAT", "JWT", "SESSION_ID", "COOKIE", "CLIENT_CREDENTIALS", "OAUTH_CLIENT_ID", "AUTH", "SSH_PASSPHRASE",
		"LICENSE_KEYS", "TOTP_OTP", "MY_CREDS",
		// headers
		"Authorization", "Proxy-Authorization", "X-Api-Key", "X-Goog-Api-Key", "X-Auth-Token", "Cookie",
		"X-Session", "XApiKey", "X-CSRF-Token",
		// flags
		"--token", "--api-key", "--api_key", "--apiKey", "--APIKey", "--key", "-k", "--session", "--pin",
		"--password", "--passcode", "--private-key", "--bearer", "--auth-token", "--client-secret", "--authz",
	}
	// -k is a single letter: no rule can know it means key.
	credentials = slices.DeleteFunc(credentials, func(s string) bool { return s == "-k" })
	settings := []string{
		"DEBUG", "LOG_LEVEL", "REPORT_SCOPE", "PATH", "HOME", "MONKEY", "KEYBOARD", "HOTKEY_MODE", "PING_INTERVAL",
		"AUTHOR", "GIT_AUTHOR_NAME", "AUTHORITY", "PATTERN", "SPINNER", "PATCH", "Content-Type", "Accept", "User-Agent",
		"X-Request-Id", "--port", "--root", "--verbose", "--keep-alive", "--pinned", "--path", "-y", "",
	}
	for _, n := range credentials {
		if !IsCredentialName(n) {
			t.Errorf("IsCredentialName(%q) = false, want true", n)
		}
	}
	for _, n := range settings {
		if IsCredentialName(n) {
			t.Errorf("IsCredentialName(%q) = true, want false", n)
		}
	}
}

func TestWords(t *testing.T) {
	cases := map[string][]string{
		"X-Api-Key":       {"x", "api", "key"},
		"apiKey":          {"api", "key"},
		"APIKey":          {"api", "key"},
		"XApiKey":         {"x", "api", "key"},
		"AWS_SECRET_KEY2": {"aws", "secret", "key2"},
		"oauth2Token":     {"oauth2", "token"},
		"--session=x":     {"session", "x"},
		"":                nil,
		"ÄpfelKey":        {"äpfel", "key"},
		"API2Key":         {"api2", "key"},
		"tokenÜber":       {"token", "über"},
		"令牌TOKEN":         {"令牌", "token"},
	}
	for in, want := range cases {
		if got := words(in); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLooksLikeKey(t *testing.T) {
	keys := []string{"sk-live-12345678", "ghp_abcdefgh12345", "github_pat_11AAAAAAA", "AKIAIOSFODNN7EXAMPLE",
		"a1b2c3d4e5f6a7b8c9d0e1f2a3b4", "NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5"}
	values := []string{"sk-short", "hello", "some-long-readable-server-name", "/usr/local/bin/server-12345678901234567890",
		"2024.11.05-release-candidate-01", "", "123456789012345678901234567890"}
	for _, v := range keys {
		if !LooksLikeKey(v) {
			t.Errorf("LooksLikeKey(%q) = false, want true", v)
		}
	}
	for _, v := range values {
		if LooksLikeKey(v) {
			t.Errorf("LooksLikeKey(%q) = true, want false", v)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://user:hunter2@mcp.example.com/mcp", "https://<redacted>@mcp.example.com/mcp"},
		{"https://mcp.example.com/mcp?api_key=hunter2&mode=ro", "https://mcp.example.com/mcp?api_key=<redacted>&mode=<redacted>"},
		{"https://mcp.example.com/mcp?flag&sk-live-12345678", "https://mcp.example.com/mcp?flag&<redacted>"},
		{"https://mcp.example.com/mcp#hunter2", "https://mcp.example.com/mcp#<redacted>"},
		{"https://mcp.zapier.com/api/mcp/s/NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5/mcp", "https://mcp.zapier.com/api/mcp/s/<redacted>/mcp"},
		{"https://mcp.example.com/v1/servers/some-long-readable-server-name/mcp", "https://mcp.example.com/v1/servers/some-long-readable-server-name/mcp"},
		{"http://[::1]:8080/mcp", "http://[::1]:8080/mcp"},
		{"https://bad host/%zz", Redacted},
		{"mailto:someone@example.com", Redacted},
	}
	for _, tc := range cases {
		if got := RedactURL(tc.in, nil); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	keep := func(part string) bool { return part == "KEEPME0123456789abcdefghij" }
	in := "https://h.example.com/KEEPME0123456789abcdefghij?k=KEEPME0123456789abcdefghij&x=y"
	if got, want := RedactURL(in, keep), "https://h.example.com/KEEPME0123456789abcdefghij?k=KEEPME0123456789abcdefghij&x=<redacted>"; got != want {
		t.Errorf("RedactURL with keep = %q, want %q", got, want)
	}
}

package expand

import (
	"reflect"
	"testing"
)

func TestRedactValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"${TOKEN}", "${TOKEN}"},
		{"${file:/run/secrets/token}", "${file:/run/secrets/token}"},
		{"${file:${CREDENTIALS_DIRECTORY}/token}", "${file:${CREDENTIALS_DIRECTORY}/token}"},
		{"${input:api-key}", "${input:api-key}"},
		{"${env:TOKEN}", "${env:TOKEN}"},
		{"Bearer ${TOKEN}", "Bearer ${TOKEN}"},
		{"${USER}:${PASS}", "${USER}:${PASS}"},
		{"${TOKEN:-}", "${TOKEN:-}"},
		{"${TOKEN:-${OTHER}}", "${TOKEN:-${OTHER}}"},
		{"${TOKEN:-hardcoded-secret}", "${TOKEN:-<redacted>}"},
		{"${env:TOKEN:-hardcoded-secret}", "${env:TOKEN:-<redacted>}"},
		{"${A:-${B:-hardcoded-secret}}", "${A:-<redacted>}"},
		{"Bearer abc123", "<redacted>"},
		{"sk-live-123", "<redacted>"},
		{"abc${TOKEN}", "<redacted>"},
		{"${TOKEN}abc", "<redacted>"},
		{"Bearer secret ${TOKEN}", "<redacted>"},
		{"${TOKEN", "<redacted>"},
		{"$${TOKEN}", "<redacted>"},
	}
	for _, tc := range cases {
		if got := RedactValue(tc.in); got != tc.want {
			t.Errorf("RedactValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://user:hunter2@mcp.example.com/mcp", "https://<redacted>@mcp.example.com/mcp"},
		{"https://mcp.example.com/mcp?api_key=hunter2&mode=ro", "https://mcp.example.com/mcp?api_key=<redacted>&mode=<redacted>"},
		{"https://mcp.example.com/mcp?api_key=${KEY}&flag", "https://mcp.example.com/mcp?api_key=${KEY}&flag"},
		{"https://${HOST}/mcp", "https://${HOST}/mcp"},
		{"https://mcp.example.com/mcp#hunter2", "https://mcp.example.com/mcp#<redacted>"},
		{"https://mcp.zapier.com/api/mcp/s/NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5/mcp", "https://mcp.zapier.com/api/mcp/s/<redacted>/mcp"},
		{"https://mcp.example.com/v1/servers/some-long-readable-server-name/mcp", "https://mcp.example.com/v1/servers/some-long-readable-server-name/mcp"},
		{"https://${HOST:-mcp.example.com}/mcp", "https://${HOST:-mcp.example.com}/mcp"},
		{"${EVENTS_URL:-https://events.example.com/sse?key=hunter2}", "${EVENTS_URL:-https://events.example.com/sse?key=<redacted>}"},
		{"http://[::1]:8080/mcp", "http://[::1]:8080/mcp"},
		{"https://bad host/%zz", "<redacted>"},
	}
	for _, tc := range cases {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"-y", "@modelcontextprotocol/server-github", "--token", "hunter2", "--api-key=hunter2",
		"--port", "8080", "https://h.example.com/x?k=hunter2", "ghp_abcdefgh12345", "${TOKEN}",
		"--password=${PW}", "--auth-token", "${TOKEN}", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4", "--root=/srv/data"}
	want := []string{"-y", "@modelcontextprotocol/server-github", "--token", "<redacted>", "--api-key=<redacted>",
		"--port", "8080", "https://h.example.com/x?k=<redacted>", "<redacted>", "${TOKEN}",
		"--password=${PW}", "--auth-token", "${TOKEN}", "<redacted>", "--root=/srv/data"}
	if got := RedactArgs(in); !reflect.DeepEqual(got, want) {
		t.Errorf("RedactArgs\n got: %q\nwant: %q", got, want)
	}
	// Every flag whose name says credential hides its value, by the same
	// rule the scrubber uses for short values: these once printed as
	// "--key hunter22 --session=s3cr3tval --pin 4821".
	in = []string{"--key", "hunter22", "--session=s3cr3tval", "--pin", "4821", "--apiKey", "k1", "--port", "8080"}
	want = []string{"--key", "<redacted>", "--session=<redacted>", "--pin", "<redacted>", "--apiKey", "<redacted>", "--port", "8080"}
	if got := RedactArgs(in); !reflect.DeepEqual(got, want) {
		t.Errorf("RedactArgs\n got: %q\nwant: %q", got, want)
	}
	if RedactArgs(nil) != nil {
		t.Error("RedactArgs(nil) is not nil")
	}
}

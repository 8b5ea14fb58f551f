package credential

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		e      Evidence
		marker string // "" when not rejected
		quote  string // checked when set
	}{
		{name: "401 on the transport", e: Evidence{Given: true, HTTPStatus: 401, Error: "tools/list: HTTP 401 Unauthorized"},
			marker: "HTTP 401", quote: "tools/list: HTTP 401 Unauthorized"},
		{name: "403 on the transport", e: Evidence{Given: true, HTTPStatus: 403, Error: "initialize: HTTP 403 Forbidden"}, marker: "HTTP 403"},
		{name: "401 to a server given no credential: it needs one", e: Evidence{HTTPStatus: 401, Error: "initialize: HTTP 401 Unauthorized"}},
		{name: "500 on the transport", e: Evidence{Given: true, HTTPStatus: 500, Error: "initialize: HTTP 500"}},
		{name: "GitHub, as server-github passes it on", e: Evidence{RPCMessage: "Authentication Failed: Bad credentials"},
			marker: "bad credentials", quote: "Authentication Failed: Bad credentials"},
		{name: "Slack, in the JSON document of a success result",
			e:      Evidence{ReportedError: `"invalid_auth"`, Text: `{"ok":false,"error":"invalid_auth"}`, HasDocument: true},
			marker: "invalid_auth", quote: `{"ok":false,"error":"invalid_auth"}`},
		{name: "Slack, revoked", e: Evidence{ReportedError: `"token_revoked"`, Text: `{"ok":false,"error":"token_revoked"}`, HasDocument: true},
			marker: "token_revoked"},
		{name: "Slack, another error is not a credential", e: Evidence{ReportedError: `"channel_not_found"`, Text: `{"ok":false,"error":"channel_not_found"}`, HasDocument: true}},
		{name: "Brave, in an isError result", e: Evidence{IsError: true,
			Text: "Error: Brave API error: 422 Unprocessable Entity\n{\"type\":\"ErrorResponse\",\"error\":{\"code\":\"SUBSCRIPTION_TOKEN_INVALID\"}}"},
			marker: "subscription_token_invalid"},
		{name: "PostgreSQL", e: Evidence{RPCMessage: `password authentication failed for user "mcp"`}, marker: "password authentication failed for user"},
		{name: "a connection refused is not a credential", e: Evidence{RPCMessage: "connect ECONNREFUSED 127.0.0.1:5432"}},
		{name: "OAuth invalid_token", e: Evidence{IsError: true, Text: `upstream said: {"error":"invalid_token","error_description":"The access token expired"}`}, marker: "invalid_token"},
		{name: "an HTTP client's 401", e: Evidence{IsError: true, Text: "Request failed with status code 401"}, marker: "status code 401"},
		{name: "a status line in an error", e: Evidence{IsError: true, Text: "upstream API error: 401 Unauthorized: token revoked"}, marker: "401 unauthorized"},
		{name: "a short plain-text success result", e: Evidence{Text: "Error: Bad credentials"}, marker: "bad credentials"},
		{name: "a success result's data never", e: Evidence{Text: `{"items":[{"title":"Fix: bad credentials on retry"}]}`, HasDocument: true}},
		{name: "a long plain-text success result is data", e: Evidence{Text: strings.Repeat("issue: bad credentials when the token rotates. ", 10)}},
		{name: "part of a longer code is no marker", e: Evidence{IsError: true, Text: "not_invalid_auth_at_all"}},
		{name: "a 404 is no credential", e: Evidence{IsError: true, Text: "Not Found: Resource not found"}},
		{name: "nothing", e: Evidence{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, ok := Rejected(tc.e)
			if ok != (tc.marker != "") || r.Marker != tc.marker {
				t.Fatalf("Rejected = %+v, %v; want marker %q", r, ok, tc.marker)
			}
			if ok && r.Source == "" {
				t.Errorf("no source for marker %q", r.Marker)
			}
			if tc.quote != "" && r.Quote != tc.quote {
				t.Errorf("quote %q, want %q", r.Quote, tc.quote)
			}
		})
	}
}

// The quote is one line, bounded, valid UTF-8, and shows the marker even
// when it comes late in a long message.
func TestRejectedQuote(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é context ", 60) + "Authentication Failed: Bad credentials\n" + strings.Repeat("trailing ", 40)
	r, ok := Rejected(Evidence{RPCMessage: long})
	if !ok {
		t.Fatal("not rejected")
	}
	if len(r.Quote) > maxQuoteBytes || strings.Contains(r.Quote, "\n") || !utf8.ValidString(r.Quote) {
		t.Errorf("quote %q: %d bytes, want one valid line of at most %d", r.Quote, len(r.Quote), maxQuoteBytes)
	}
	if !strings.Contains(r.Quote, "Bad credentials") {
		t.Errorf("quote %q lacks the marker", r.Quote)
	}
}

// Every phrase is documented where users read what counts as a rejected
// credential, and is lower case (matching is case-insensitive).
func TestPhrasesDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/contracts-format.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range phrases {
		if p.Text != strings.ToLower(p.Text) {
			t.Errorf("phrase %q is not lower case", p.Text)
		}
		if !strings.Contains(strings.ToLower(string(doc)), "`"+p.Text+"`") {
			t.Errorf("docs/contracts-format.md does not list the phrase `%s`", p.Text)
		}
	}
}

package probe

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    *Challenge
	}{
		{
			name:    "no header",
			headers: nil,
			want:    nil,
		},
		{
			name:    "401 with resource metadata and scope",
			headers: []string{`Bearer resource_metadata="https://host/.well-known/oauth-protected-resource", scope="files:read"`},
			want:    &Challenge{Scheme: "Bearer", ResourceMetadata: "https://host/.well-known/oauth-protected-resource", Scope: "files:read"},
		},
		{
			name:    "403 insufficient scope with description",
			headers: []string{`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://h/m", error_description="needs write"`},
			want:    &Challenge{Scheme: "Bearer", Error: "insufficient_scope", Scope: "files:read files:write", ResourceMetadata: "https://h/m", Description: "needs write"},
		},
		{
			name:    "token values, odd spacing and scheme case",
			headers: []string{`bearer   error = invalid_token ,scope=read`},
			want:    &Challenge{Scheme: "bearer", Error: "invalid_token", Scope: "read"},
		},
		{
			name:    "escapes in quoted strings",
			headers: []string{`Bearer error_description="say \"no\", then \\ leave", error="invalid_token"`},
			want:    &Challenge{Scheme: "Bearer", Error: "invalid_token", Description: `say "no", then \ leave`},
		},
		{
			name:    "Bearer after another challenge in one header",
			headers: []string{`Basic realm="a, b", Bearer error="invalid_token", scope="x"`},
			want:    &Challenge{Scheme: "Bearer", Error: "invalid_token", Scope: "x"},
		},
		{
			name:    "Bearer in a second header",
			headers: []string{`Basic realm="x"`, `Bearer scope="y"`},
			want:    &Challenge{Scheme: "Bearer", Scope: "y"},
		},
		{
			name:    "no Bearer: the first challenge",
			headers: []string{`Basic realm="x", Digest realm="y", nonce="n"`},
			want:    &Challenge{Scheme: "Basic"},
		},
		{
			name:    "token68 then another challenge",
			headers: []string{`Negotiate abc+/==, Bearer error="invalid_token"`},
			want:    &Challenge{Scheme: "Bearer", Error: "invalid_token"},
		},
		{
			name:    "bare scheme",
			headers: []string{`Bearer`},
			want:    &Challenge{Scheme: "Bearer"},
		},
		{
			name:    "first of a repeated parameter wins",
			headers: []string{`Bearer scope="a", scope="b"`},
			want:    &Challenge{Scheme: "Bearer", Scope: "a"},
		},
		{
			name:    "unterminated quote runs to the end",
			headers: []string{`Bearer error="invalid_token`},
			want:    &Challenge{Scheme: "Bearer", Error: "invalid_token"},
		},
		{
			name:    "garbage is skipped, not fatal",
			headers: []string{`@@ "x" Bearer error=@ scope="s"`},
			want:    &Challenge{Scheme: "Bearer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.headers {
				h.Add("WWW-Authenticate", v)
			}
			got := parseChallenge(h)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("parseChallenge(%q) = %+v, want %+v", tt.headers, got, tt.want)
			}
		})
	}
}

func TestParseChallengeBoundsFields(t *testing.T) {
	h := http.Header{}
	h.Set("WWW-Authenticate", `Bearer error_description="`+strings.Repeat("x", 10_000)+`"`)
	got := parseChallenge(h)
	if got == nil || len(got.Description) > maxChallengeField+len("…") {
		t.Fatalf("description kept %d bytes, want at most %d", len(got.Description), maxChallengeField)
	}
}

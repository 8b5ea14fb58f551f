package runner

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

func TestScrubberString(t *testing.T) {
	target := probe.Target{
		Env:     map[string]string{"REPORT_API_TOKEN": "tok-1234567890", "LOG_LEVEL": "info", "REPORT_SCOPE": "read"},
		Headers: map[string]string{"Authorization": "Bearer hdr-abcdefghij", "X-Api-Key": "key-0987654321"},
	}
	cases := []struct{ in, want string }{
		{"auth failed for tok-1234567890", "auth failed for <redacted>"},
		{"sent Bearer hdr-abcdefghij", "sent <redacted>"}, // the whole header value, scheme and all
		{"token hdr-abcdefghij", "token <redacted>"},      // the credential alone
		{"key-0987654321 and tok-1234567890", "<redacted> and <redacted>"},
		// Short values are settings, not secrets: replacing them would mangle
		// every line that happens to hold them.
		{"level info, scope read", "level info, scope read"},
		{"", ""},
	}
	s := newScrubber(probe.Target{}, target)
	for _, tc := range cases {
		if got := s.str(tc.in); got != tc.want {
			t.Errorf("str(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A secret inside JSON is replaced where it stands as written; one that
// JSON would escape is left, so the message stays valid JSON.
func TestScrubberRawKeepsJSONValid(t *testing.T) {
	cases := []struct {
		name, secret, in string
		replaced         bool
	}{
		{"plain", "plain-secret-value", `{"description":"key plain-secret-value"}`, true},
		{"needs escaping", `quo"ted-secret`, `{"description":"key quo\"ted-secret"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScrubber(probe.Target{}, probe.Target{Env: map[string]string{"K": tc.secret}})
			out := s.raw(json.RawMessage(tc.in))
			if !json.Valid(out) {
				t.Fatalf("raw(%s) = %s: not JSON", tc.in, out)
			}
			if got := strings.Contains(string(out), "<redacted>"); got != tc.replaced {
				t.Errorf("raw(%s) = %s; replaced %t, want %t", tc.in, out, got, tc.replaced)
			}
		})
	}
}

// Every string the server or the probe wrote is scrubbed in the copy, and
// the original is left as it was.
func TestScrubberResult(t *testing.T) {
	const secret = "s3cret-t0ken-value"
	orig := &probe.Result{
		Error:         "rejected " + secret,
		ServerName:    "srv " + secret,
		ServerVersion: secret,
		StderrTail:    "fatal: token " + secret + " expired\n",
		Challenge:     &probe.Challenge{Description: "bad token " + secret},
		Warnings:      []string{"warn " + secret},
		Tools: []probe.Tool{{
			Name: "t", Description: "uses " + secret,
			InputSchema: json.RawMessage(`{"default":"` + secret + `"}`),
		}},
		Transcript: []probe.TranscriptEntry{{Message: json.RawMessage(`{"echo":"` + secret + `"}`), Note: secret}},
	}
	before, _ := json.Marshal(orig)
	got := newScrubber(probe.Target{}, probe.Target{Env: map[string]string{"REPORT_API_TOKEN": secret}}).result(orig)
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), secret) {
		t.Errorf("the scrubbed result holds the secret: %s", out)
	}
	if n := strings.Count(string(out), "redacted"); n != 10 {
		t.Errorf("%d redactions, want one in each of the 10 fields: %s", n, out)
	}
	if after, _ := json.Marshal(orig); string(after) != string(before) {
		t.Errorf("the original result changed:\n%s\nwas\n%s", after, before)
	}
}

// resultText is everything a result says, as its JSON.
func resultText(t *testing.T, r *probe.Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What references put into a value is told from the literal text around
// them, piece by piece between slashes when the pieces line up.
func TestReferencedValues(t *testing.T) {
	cases := []struct {
		written, expanded string
		want              []string
	}{
		{"--api-key=${KEY}", "--api-key=k-123", []string{"k-123"}},
		{"${KEY}", "k-123", []string{"k-123"}},
		{"https://${HOST}/mcp/${KEY}/sse", "https://h.example/mcp/k-123/sse", []string{"h.example", "k-123"}},
		{"a${KEY}b", "ak/1/2b", []string{"k/1/2"}}, // the value holds slashes: pieces do not line up
		{"${A}-${B}", "x-y", []string{"x-y"}},
		{"${EMPTY}", "", nil},
		{"no reference", "no reference", nil},
	}
	for _, tc := range cases {
		if got := referencedValues(tc.written, tc.expanded); !slices.Equal(got, tc.want) {
			t.Errorf("referencedValues(%q, %q) = %q, want %q", tc.written, tc.expanded, got, tc.want)
		}
	}
}

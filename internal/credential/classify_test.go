package credential

import (
	"strings"
	"testing"
	"time"
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
			marker: "invalid auth", quote: `{"ok":false,"error":"invalid_auth"}`},
		{name: "Slack, revoked", e: Evidence{ReportedError: `"token_revoked"`, Text: `{"ok":false,"error":"token_revoked"}`, HasDocument: true},
			marker: "token revoked"},
		{name: "Slack, another error is not a credential", e: Evidence{ReportedError: `"channel_not_found"`, Text: `{"ok":false,"error":"channel_not_found"}`, HasDocument: true}},
		{name: "Brave, in an isError result", e: Evidence{IsError: true,
			Text: "Error: Brave API error: 422 Unprocessable Entity\n{\"type\":\"ErrorResponse\",\"error\":{\"code\":\"SUBSCRIPTION_TOKEN_INVALID\"}}"},
			marker: "token invalid"},
		{name: "PostgreSQL", e: Evidence{RPCMessage: `password authentication failed for user "mcp"`}, marker: "password … failed"},
		{name: "a connection refused is not a credential", e: Evidence{RPCMessage: "connect ECONNREFUSED 127.0.0.1:5432"}},
		{name: "OAuth invalid_token", e: Evidence{IsError: true, Text: `upstream said: {"error":"invalid_token","error_description":"The access token expired"}`}, marker: "invalid token"},
		{name: "an HTTP client's 401", e: Evidence{IsError: true, Text: "Request failed with status code 401"}, marker: "status 401"},
		{name: "a status line in an error", e: Evidence{IsError: true, Text: "upstream API error: 401 Unauthorized: token revoked"}, marker: "status 401"},
		{name: "a short plain-text success result", e: Evidence{Text: "Error: Bad credentials"}, marker: "bad credentials"},
		{name: "a success result's data never", e: Evidence{Text: `{"items":[{"title":"Fix: bad credentials on retry"}]}`, HasDocument: true}},
		{name: "a long plain-text success result is data", e: Evidence{Text: strings.Repeat("issue: bad credentials when the token rotates. ", 10)}},
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

// The three outcomes, as callers read them: the kind, and the words.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		e     Evidence
		kind  Kind
		quote string // contained in the quote, when set
	}{
		{"Notion's 401 as a normal result", Evidence{Given: true, Text: `{"object":"error","status":401,"code":"unauthorized","message":"API token is invalid."}`, HasDocument: true},
			KindRejected, "API token is invalid."},
		{"Context7 with its service down", Evidence{Given: true, Text: "Error searching libraries: TypeError: fetch failed"}, KindUnreachable, "fetch failed"},
		{"Slack's Go server on stderr", Evidence{Given: true, Stderr: "starting\nFATAL Failed to authenticate: invalid_auth\n"}, KindRejected, "invalid_auth"},
		{"the same to a server given nothing", Evidence{Stderr: "FATAL Failed to authenticate: invalid_auth\n"}, KindNone, ""},
		{"Slack's Go server during an outage: the network wins", Evidence{Given: true,
			Stderr: "Authentication failed - check your Slack tokens\ndial tcp: lookup slack.com: no such host\n"}, KindUnreachable, "dial tcp"},
		{"npm's own registry 401 on stderr is not the server's", Evidence{Given: true,
			Stderr: "npm error code E401\nnpm error Unable to authenticate, need: Basic realm=\"registry\"\n"}, KindNone, ""},
		{"a 403 lacking a scope quotes which", Evidence{Given: true, IsError: true,
			Text: `{"message":"Resource not accessible by integration","status":"403"}`}, KindRejected, "Resource not accessible by integration"},
		{"a language model's tokens", Evidence{Given: true, IsError: true, Text: "Error: token limit exceeded: max tokens is 4096, invalid request"}, KindNone, ""},
		{"an MCP session id", Evidence{Given: true, RPCMessage: "Bad Request: No valid session ID provided"}, KindNone, ""},
		{"an upstream's 503", Evidence{Given: true, IsError: true, Text: "Notion API error: status 503"}, KindUnreachable, "503"},
		{"data is never read", Evidence{Given: true, Text: `{"results":[{"title":"fetch failed","body":"Invalid API key"}]}`, HasDocument: true}, KindNone, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Classify(tc.e)
			if o.Kind != tc.kind || !strings.Contains(o.Quote, tc.quote) {
				t.Fatalf("Classify = %+v; want kind %q quoting %q", o, tc.kind, tc.quote)
			}
			if o.Kind != KindNone && (o.Marker == "" || o.Source == "") {
				t.Errorf("no marker or source: %+v", o)
			}
		})
	}
}

// Only the first maxRead bytes of an answer are read: a marker past them
// is not seen, however long the answer.
func TestClassifyReadsAHead(t *testing.T) {
	t.Parallel()
	e := Evidence{Given: true, IsError: true, Text: strings.Repeat("a", maxRead) + " Invalid API key"}
	if o := Classify(e); o.Kind != KindNone {
		t.Errorf("read past %d bytes: %+v", maxRead, o)
	}
	e.Text = "Invalid API key " + strings.Repeat("a", 1<<20)
	if o := Classify(e); o.Kind != KindRejected || len(o.Quote) > maxQuoteBytes {
		t.Errorf("a 1 MiB answer: %+v", o)
	}
}

// The stderr of a server that kept serving: a rejection of the credential
// counts, a network failure beside it wins, and nothing else is read: an
// absent credential, a network failure alone, a server given none.
func TestClassifyRunningStderr(t *testing.T) {
	t.Parallel()
	const logged401 = `[figma] API error (401): {"error": "Invalid token", "error_tag": "AUTH_INVALID_TOKEN", "http_code": 401}` + "\n"
	tests := []struct {
		name, stderr string
		given        bool
		want         Kind
	}{
		{"a 401 logged at start", "Starting...\n" + logged401 + "Server running on stdio\n", true, KindRejected},
		{"Stripe's relay's 401", `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: rk_test_****"}}` + "\n", true, KindRejected},
		{"a network failure beside it wins", logged401 + "Error: connect ECONNREFUSED 127.0.0.1:443\n", true, KindUnreachable},
		{"a network failure alone", "update check failed: TypeError: fetch failed\n", true, KindNone},
		{"a missing key", "API key missing: set FIGMA_API_KEY\n", true, KindNone},
		{"a required credential", "Authentication required to read private files\n", true, KindNone},
		{"a key not provided", "No token provided for the optional GitHub integration\n", true, KindNone},
		{"Sentry's server, without a key it may do without", "Warning: No LLM API key found (OPENAI_API_KEY, ANTHROPIC_API_KEY, or OPENROUTER_API_KEY).\nAI-powered search tools will be unavailable.\n", true, KindNone},
		{"given none", logged401, false, KindNone},
		{"npm's own 401", "npm error code E401\nnpm error Unable to authenticate, need: Basic realm=\"registry\"\n", true, KindNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Classify(Evidence{Given: tc.given, Stderr: tc.stderr, Running: true})
			if o.Kind != tc.want {
				t.Fatalf("%+v, want %q", o, tc.want)
			}
			if o.Kind != KindNone && !strings.Contains(o.Source, "kept serving") {
				t.Errorf("source %q does not say where it was read", o.Source)
			}
		})
	}
}

// A rate limit or a quota is its own kind, with when the answer says to
// ask again, in each way servers pass it on; never in a success's text.
func TestRateLimited(t *testing.T) {
	t.Parallel()
	epoch := time.Unix(1893456000, 0) // 2030-01-01
	tests := []struct {
		name  string
		e     Evidence
		want  Kind
		after time.Duration
		at    time.Time
	}{
		{"the MCP transport's 429 with Retry-After", Evidence{Given: true, HTTPStatus: 429, Error: "tools/call: HTTP 429 Too Many Requests (Retry-After: 120)"}, KindRateLimited, 2 * time.Minute, time.Time{}},
		{"Brave's headers passed on", Evidence{IsError: true, Text: "Brave API error: 429 Too Many Requests\nX-RateLimit-Limit: 1, 2000\nX-RateLimit-Reset: 1, 1419704"}, KindRateLimited, 1419704 * time.Second, time.Time{}},
		{"GitHub's reset as an epoch second", Evidence{IsError: true, Text: `API rate limit exceeded (x-ratelimit-reset: 1893456000)`}, KindRateLimited, 0, epoch},
		{"Context7's member", Evidence{IsError: true, Text: `{"error": "Too many requests", "status": 429, "retryAfterSeconds": 60}`}, KindRateLimited, time.Minute, time.Time{}},
		{"words", Evidence{RPCMessage: "Rate limit reached for requests. Please try again in 20s."}, KindRateLimited, 20 * time.Second, time.Time{}},
		{"no hint", Evidence{IsError: true, Text: "Monthly quota exceeded for this API key"}, KindRateLimited, 0, time.Time{}},
		{"a success's text is data", Evidence{Text: "Quota: 500 of 1000 requests used this month"}, KindNone, 0, time.Time{}},
		{"a validation error mentioning a quota", Evidence{IsError: true, Text: "Invalid arguments: quota must be a number"}, KindNone, 0, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Classify(tc.e)
			if o.Kind != tc.want || o.RetryAfter != tc.after || !o.ResetAt.Equal(tc.at) {
				t.Errorf("%+v, want %q after %s at %s", o, tc.want, tc.after, tc.at)
			}
		})
	}
}

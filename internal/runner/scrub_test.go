package runner

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/expand"
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
	s := NewScrubber(Secrets{Probed: target})
	for _, tc := range cases {
		if got := s.str(tc.in); got != tc.want {
			t.Errorf("str(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Secrets the target does not hold (an OAuth client's tokens) are
// credentials whatever their length: a short one is replaced as a whole
// word, as a short value under a credential's name is, in every form a
// long one may take.
func TestScrubberOtherSecrets(t *testing.T) {
	s := NewScrubber(Secrets{Others: []string{"at-0123456789abcdef", "cs42x"}})
	cases := []struct{ in, want string }{
		{"token at-0123456789abcdef expired", "token <redacted> expired"},
		{"token at%2D0123456789abcdef", "token <redacted>"},
		{"client secret cs42x refused", "client secret <redacted> refused"},
		{"tool cs42xyz", "tool cs42xyz"}, // a short secret only as a whole word
	}
	for _, tc := range cases {
		if got := s.str(tc.in); got != tc.want {
			t.Errorf("str(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var zero Scrubber
	if got := zero.str("token at-0123456789abcdef"); got != "token at-0123456789abcdef" {
		t.Errorf("the zero Scrubber changed %q", got)
	}
}

// A secret inside JSON is replaced however the server escaped it, in keys
// and values, and the message stays valid JSON.
func TestScrubberRawKeepsJSONValid(t *testing.T) {
	cases := []struct{ name, secret, in, want string }{
		{"plain", "plain-secret-value", `{"description":"key plain-secret-value"}`, `{"description":"key <redacted>"}`},
		{"needs escaping", `quo"ted-secret`, `{"description":"key quo\"ted-secret"}`, `{"description":"key <redacted>"}`},
		{"escaped slash", "a/b/c-secret-1", `{"d":"x a\/b\/c-secret-1"}`, `{"d":"x <redacted>"}`},
		{"unicode escapes", "a&b<c>-secret", `{"d":"a\u0026b\u003cc\u003e-secret"}`, `{"d":"<redacted>"}`},
		{"in a key", "key-as-secret-1", `{"properties":{"key-as-secret-1":{"type":"string"}}}`, `{"properties":{"<redacted>":{"type":"string"}}}`},
		{"numbers left alone", "12345678", `{"maximum":12345678,"d":"12345678"}`, `{"maximum":12345678,"d":"<redacted>"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"K": tc.secret}}})
			out := s.raw(json.RawMessage(tc.in))
			if !json.Valid(out) {
				t.Fatalf("raw(%s) = %s: not JSON", tc.in, out)
			}
			if string(out) != tc.want {
				t.Errorf("raw(%s) = %s, want %s", tc.in, out, tc.want)
			}
		})
	}
}

// A secret is scrubbed in the encodings a server echoes it in: URL-encoded
// (query and path escaping), base64 (both alphabets, with and without
// padding) and JSON-escaped.
func TestScrubberEncodings(t *testing.T) {
	const secret = "s3cr/et+key=&?~ü"
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"API_TOKEN": secret}}})
	forms := map[string]string{
		"query escaped":       url.QueryEscape(secret),
		"path escaped":        url.PathEscape(secret),
		"base64":              base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 raw":          base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"base64 url":          base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64 raw url":      base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"json, slash escaped": `s3cr\/et+key=\u0026?~ü`,
		"json, html escaped":  `s3cr/et+key=\u0026?~ü`,
	}
	for name, form := range forms {
		in := "GET /mcp?key=" + form + " failed"
		if got := s.str(in); got != "GET /mcp?key=<redacted> failed" {
			t.Errorf("%s: str(%q) = %q", name, in, got)
		}
	}
}

// A short value is scrubbed where it stands as a whole word, when its name
// says credential; a short setting is left alone.
func TestScrubberShortSecrets(t *testing.T) {
	target := probe.Target{
		// LICENSE_KEYS says credential by the rule config check redacts by
		// too (secret.IsCredentialName); an earlier word list of its own
		// here did not know it.
		Env:     map[string]string{"REPORT_PIN": "h2x7", "LICENSE_KEYS": "zq81", "DEBUG": "1", "LOG_LEVEL": "info"},
		Headers: map[string]string{"Authorization": "Bearer abc12", "X-Region": "eu"},
	}
	s := NewScrubber(Secrets{Probed: target})
	cases := []struct{ in, want string }{
		{"h2x7", "<redacted>"},           // a whole value: the server's name, say
		{"leak_h2x7", "leak_<redacted>"}, // a tool name
		{"bad pin h2x7, retry", "bad pin <redacted>, retry"},
		{"xh2x7y and h2x71", "xh2x7y and h2x71"},            // inside a longer word: not this secret
		{"token abc12 expired", "token <redacted> expired"}, // the credential of a header
		{"Bearer abc12", "<redacted>"},
		{"YWJjMTI=", "<redacted>"}, // base64 of the credential
		{"license zq81 refused", "license <redacted> refused"},
		{"level info, version 1.0.1, region eu", "level info, version 1.0.1, region eu"},
	}
	for _, tc := range cases {
		if got := s.str(tc.in); got != tc.want {
			t.Errorf("str(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	raw := s.raw(json.RawMessage(`{"serverInfo":{"name":"h2x7","version":"1"}}`))
	if string(raw) != `{"serverInfo":{"name":"<redacted>","version":"1"}}` {
		t.Errorf("raw = %s", raw)
	}
}

// Every string the server or the probe wrote is scrubbed in the copy, and
// the original is left as it was (TestScrubberCoversEveryField does the
// same for every field the types have).
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
	got := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"REPORT_API_TOKEN": secret}}}).Result(orig)
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), secret) {
		t.Errorf("the scrubbed result holds the secret: %s", out)
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

// BenchmarkScrubResult is the cost of scrubbing one probe of 40 tools of a
// server with a bearer token and an env secret (every string of every
// schema compared, decoded).
func BenchmarkScrubResult(b *testing.B) {
	res := benchResult("Tool that does something useful.")
	s := benchScrubber()
	b.ReportAllocs()
	for b.Loop() {
		s.Result(res)
	}
}

// BenchmarkScrubResultCut is BenchmarkScrubResult with every tool's
// description cut short ("…"), and a stderr tail cut inside a line: each
// such text is also searched for runs of a secret.
func BenchmarkScrubResultCut(b *testing.B) {
	res := benchResult("Tool that does something useful, as its long description goes on to say…")
	res.StderrTail = "…" + strings.Repeat("a line of the server's log, as it starts. ", 50)
	s := benchScrubber()
	b.ReportAllocs()
	for b.Loop() {
		s.Result(res)
	}
}

// benchResult is a probe of 40 tools of 12 parameters each.
func benchResult(description string) *probe.Result {
	res := &probe.Result{OK: true, ServerName: "example", ServerVersion: "1.2.3"}
	for i := range 40 {
		props := map[string]any{}
		for p := range 12 {
			props[fmt.Sprintf("param_%d", p)] = map[string]any{"type": "string", "description": fmt.Sprintf("What parameter %d of tool %d means, in a sentence.", p, i)}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"param_0"}})
		res.Tools = append(res.Tools, probe.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: description, InputSchema: schema})
	}
	return res
}

// benchScrubber is the scrubber of a server with a bearer token and an
// env secret.
func benchScrubber() Scrubber {
	return NewScrubber(Secrets{Probed: probe.Target{
		Env:     map[string]string{"API_TOKEN": "tok-1234567890abcdef"},
		Headers: map[string]string{"Authorization": "Bearer hdr-abcdefghij0123"},
	}})
}

// Encodings a server or a log line carried a secret in past an earlier
// scrubber (each once leaked): percent-encoding of every reserved byte
// (encodeURIComponent, Python's quote(s, safe="")), or of every byte with
// lowercase hex digits, hex, JSON's \u escapes of non-ASCII (Python's
// json.dumps), base64 of "user:password" with the password at each byte
// offset of a base64 group, and whitespace collapsed by a one-line error.
func TestScrubberEncodingsThatLeaked(t *testing.T) {
	cases := []struct{ name, secret, said string }{
		{"encodeURIComponent", "Tr0ub4dor&3 horse", "GET /auth?pw=Tr0ub4dor%263%20horse failed"},
		{"every byte, lowercase hex", "Tr0ub4dor&3", "pw=" + percentEvery("Tr0ub4dor&3", "%02x") + " rejected"},
		{"hex, lowercase", "Tr0ub4dor&3", "token " + hex.EncodeToString([]byte("Tr0ub4dor&3")) + " bad"},
		{"hex, uppercase, in a longer run", "Tr0ub4dor&3", "digest 00" + strings.ToUpper(hex.EncodeToString([]byte("Tr0ub4dor&3"))) + "ff x"},
		{"JSON escapes of non-ASCII", "pässwörd-42", `{"error":"bad p\u00e4ssw\u00f6rd-42"}`},
		{"JSON escapes, upper case, surrogates", "clé-🔑-secret", `key "cl\u00E9-\ud83d\udd11-secret"`},
		{"base64 of user:password, offset 0", "hunter22-long", "Basic " + base64.StdEncoding.EncodeToString([]byte("abc:hunter22-long"))},
		{"base64 of user:password, offset 1", "hunter22-long", "Basic " + base64.StdEncoding.EncodeToString([]byte("ab:hunter22-long"))},
		{"base64 of user:password, offset 2", "hunter22-long", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:hunter22-long"))},
		{"base64 url alphabet, unpadded", "hunter22-long??>>", "t=" + base64.RawURLEncoding.EncodeToString([]byte("user:hunter22-long??>>")) + "&x=1"},
		{"whitespace collapsed", "correct  horse\tbattery", "login failed for correct horse battery staple"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"SERVICE_PASSWORD": tc.secret}}})
			got := s.str(tc.said)
			if !strings.Contains(got, "<redacted>") {
				t.Errorf("str(%q) = %q: nothing redacted", tc.said, got)
			}
			if leaked := leaks(got, tc.secret); leaked != "" {
				t.Errorf("str(%q) = %q: still holds the secret (%s)", tc.said, got, leaked)
			}
		})
	}
}

// What is found in a decoded text is replaced in the text as it was sent:
// the escapes that spelled it, whole, and nothing around them.
func TestScrubberReplacesTheEscapesThatSpelledIt(t *testing.T) {
	const secret = "hunter22-é"
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"PASSWORD": secret}}})
	cases := []struct{ in, want string }{
		{"pw=%68%75%6e%74%65%72%32%32-%C3%A9&next=1", "pw=<redacted>&next=1"},
		{"pw=hun%74er22-\\u00e9 x", "pw=<redacted> x"},
		{`a "hunter22-\u00e9" b \n`, `a "<redacted>" b \n`},
		{"%2568unter22-%25C3%25A9 %41", "<redacted> %41"}, // encoded twice
		{"hunter22-%C3%A9hunter22-\\u00e9", "<redacted>"}, // two that touch: one
		{"%41%42 \\u0043 hunter22-\\u00e9!", "%41%42 \\u0043 <redacted>!"},
	}
	for _, tc := range cases {
		if got := s.str(tc.in); got != tc.want {
			t.Errorf("str(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkScrubEscaped is the cost of a hostile string: 4 MiB of escapes
// (undone once, twice or in both kinds) with no secret in it. Each
// decoding keeps one copy of the text, no more.
func BenchmarkScrubEscaped(b *testing.B) {
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"API_TOKEN": "tok-1234567890abcdef"}}})
	for _, unit := range []string{"%41", `\u0041`, `%5Cu0041`, "%2541"} {
		v := strings.Repeat(unit, (4<<20)/len(unit))
		b.Run(unit, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				s.str(v)
			}
		})
	}
}

// What config check redacts of a server's arguments, the scrubber removes
// from what the server says: both read secret.ArgSecrets. Before, the
// scrubber knew only values from ${...}, and a literal "--api-key VALUE"
// was redacted in the report's config but printed in clear in the
// server's stderr tail beside it.
func TestScrubberArgsAsRedacted(t *testing.T) {
	cases := []struct {
		args   []string
		secret string
	}{
		{[]string{"--api-key", "sk-live-0123456789"}, "sk-live-0123456789"},
		{[]string{"--token=hunter22"}, "hunter22"},
		{[]string{"--password", "pw"}, "pw"}, // short, but a credential by its flag
		{[]string{"--access-token", "abc.def"}, "abc.def"},
		{[]string{"--secret=s3"}, "s3"},
		{[]string{"run", "https://api.example.com/mcp?api_key=q-key-42&mode=ro"}, "q-key-42"},
		{[]string{"postgresql://mcp:dbpass1@127.0.0.1/app"}, "dbpass1"},
		{[]string{"--db=postgresql://mcp:dbpass2@127.0.0.1/app"}, "dbpass2"},
		{[]string{"a1b2c3d4e5f6a7b8c9d0e1f2a3b4"}, "a1b2c3d4e5f6a7b8c9d0e1f2a3b4"},
	}
	for _, tc := range cases {
		target := probe.Target{Command: "server", Args: tc.args}
		if got := strings.Join(expand.RedactArgs(tc.args), " "); strings.Contains(got, tc.secret) {
			t.Errorf("RedactArgs(%q) = %q shows %q", tc.args, got, tc.secret)
		}
		s := NewScrubber(Secrets{Written: target, Probed: target})
		said := "error: rejected " + tc.secret + ", see --help"
		if got := s.str(said); strings.Contains(got, tc.secret) {
			t.Errorf("args %q: scrubbed %q = %q: redacted in config check, shown here", tc.args, said, got)
		}
	}
	// Settings stay readable.
	target := probe.Target{Command: "server", Args: []string{"--port", "8080", "--mode=ro"}}
	if got, said := NewScrubber(Secrets{Written: target, Probed: target}).str("listening on 8080, mode ro"), "listening on 8080, mode ro"; got != said {
		t.Errorf("settings scrubbed: %q", got)
	}
}

// Secret forms that passed into tool names: HTML-escaped (&amp;, &#NN;,
// &#xHH;), with no-break or other Unicode spaces, as base32, as hex with
// colons, and in fullwidth characters. Each is scrubbed now.
func TestScrubberMoreForms(t *testing.T) {
	const secret = "sk-live&key 4242"
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"API_TOKEN": secret}}})
	hexColons := func(upper bool) string {
		var parts []string
		for _, c := range []byte(secret) {
			parts = append(parts, fmt.Sprintf("%02x", c))
		}
		h := strings.Join(parts, ":")
		if upper {
			h = strings.ToUpper(h)
		}
		return h
	}
	fullwidth := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r > ' ' && r < 0x7f {
				r += 0xff01 - '!'
			} else if r == ' ' {
				r = 0x3000
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	for name, form := range map[string]string{
		"html named":        "sk-live&amp;key 4242",
		"html decimal":      "&#115;&#107;-live&#38;key&#32;4242",
		"html hex":          "sk-live&#x26;key&#x20;4242",
		"no-break space":    "sk-live&key\u00a04242",
		"narrow nbsp":       "sk-live&key\u202f4242",
		"zero-width inside": "sk-li\u200bve&key 4242",
		"fullwidth":         fullwidth(secret),
		"base32":            base32.StdEncoding.EncodeToString([]byte(secret)),
		"base32 in a run":   base32.StdEncoding.EncodeToString([]byte("user:" + secret)),
		"hex with colons":   hexColons(false),
		"HEX WITH COLONS":   hexColons(true),
	} {
		got := s.str("tool_" + form + "_x")
		if !strings.Contains(got, "<redacted>") {
			t.Errorf("%s: %q scrubbed to %q", name, "tool_"+form+"_x", got)
		}
	}
	// Text without the secret keeps its entities, spaces and width.
	for _, text := range []string{"a &amp; b", "ｆｕｌｌ", "a\u00a0b", "de:ad:be:ef"} {
		if got := s.str(text); got != text {
			t.Errorf("%q scrubbed to %q", text, got)
		}
	}
}

package runner

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unsafe"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// What counts as a secret, and where it is replaced by config.Redacted:
//
//   - Every expanded env and header value, the credential after a header's
//     scheme word ("Bearer <token>"), what ${...} references put into
//     the arguments and the URL (not the URL's host), and the secrets an
//     argument or the URL carries as written, by the rule config check's
//     redaction follows (secret.ArgSecrets: "--api-key VALUE",
//     "--token=VALUE", a URL's userinfo and query values, a key-like
//     argument), so that what is redacted there is scrubbed here.
//   - A value of minSecretLen characters or more is replaced wherever it
//     appears. A shorter value is replaced only where it stands as a whole
//     word (not next to a letter or a digit: the whole of a server name or
//     version, "hunter2" in "bad password hunter2" or in a tool named
//     "leak_hunter2"), and only when the name it is configured under says
//     credential (secret.IsCredentialName, the rule config check's
//     redaction uses too: Authorization, X-Api-Key, Cookie, REPORT_PIN,
//     DB_PASSWORD, ...). Other short values (DEBUG=1, LOG_LEVEL=info,
//     REPORT_SCOPE=read) are settings: replacing every "1" or "info" a
//     server says would make its output unreadable.
//   - A secret is found in the forms a server or a log line may carry it
//     in (see forms and unescape): as written; with its whitespace
//     collapsed ("a  b" -> "a b", as one-line error messages do); escaped
//     in any mix of percent-encoding (either case of hex digits, every byte
//     or only some: encodeURIComponent, Python's quote(s, safe="")), JSON
//     or Go string escapes (\u00e9, surrogate pairs, \U0001f511, \/, \n,
//     \x41), up to three times over; form-encoded (spaces as "+"); as hex
//     (either case), of four bytes or more;
//     and as base64 (four bytes or more) in either alphabet, padded or not, alone or inside a
//     longer encoded text ("user:password" as HTTP Basic sends it): the
//     secret may start at any of the three byte offsets of a base64 group,
//     and the whole base64 (or hex) text around it is replaced.
//     Inside JSON (schemas, transcripts) every string, keys included, is
//     compared decoded.
//
// minSecretLen is the length from which a value is a secret wherever it is
// configured, and is replaced even inside a longer word.
const minSecretLen = 8

// maxDecodes is how many times over escaping is undone: a value escaped
// in a URL that is itself escaped in JSON is two.
const maxDecodes = 3

// Scrubber removes a server's secret values from what the server or the
// probe said: a server may echo its token on stderr, in an error, in a tool
// name or description, or in a schema, and nothing mcpwatch prints or keeps
// may carry it. NewScrubber makes one; the zero Scrubber removes nothing.
type Scrubber struct {
	patterns []pattern // longest first
	// needles are the patterns that hold no other one: text holds some
	// pattern exactly when it holds a needle, so one search for them all
	// tells whether there is anything to replace.
	needles *needles
	// grams are the patterns' runs of minSecretLen bytes, for the texts
	// that were cut short (see cut); made at the first such text.
	grams *grams
}

// pattern is one form of one secret.
type pattern struct {
	text string
	word bool // replaced only as a whole word (a short secret)
	// run is set for a form that sits inside a longer encoded text (base64,
	// hex): the whole run of the encoding's characters around it goes.
	run func(c byte) bool
}

// Secrets are what a Scrubber removes (see above).
type Secrets struct {
	// Written is the target as the configuration wrote it, before ${...}
	// expansion; only its Args and URL are read: what a reference put into
	// them is a secret. A key in a URL path ("https://host/${KEY}/sse")
	// shows in every error that names the URL; a referenced argument may be
	// echoed on stderr.
	Written probe.Target
	// Probed is the target as probed: its env and header values, and the
	// secrets its arguments and URL carry.
	Probed probe.Target
	// Others are secrets the target does not hold, each a credential
	// whatever its length: the tokens and client secret of an OAuth client
	// (oauth.Client.Secrets).
	Others []string
}

// ScrubberOf is the scrubber of a probe of b that ran on probed (b's
// target as the probe made it): the secrets both carry, and the tokens
// b's OAuth client holds so far.
func ScrubberOf(b launch.Built, probed probe.Target) Scrubber {
	s := Secrets{Written: b.Written, Probed: probed}
	if b.Client != nil {
		s.Others = b.Client.Secrets()
	}
	return NewScrubber(s)
}

// NewScrubber collects the forms of every secret of s (see above).
func NewScrubber(secrets Secrets) Scrubber {
	written, expanded := secrets.Written, secrets.Probed
	var patterns []pattern
	add := func(v string, credential bool) {
		patterns = append(patterns, forms(v, credential)...)
	}
	for _, v := range secrets.Others {
		add(v, true)
	}
	for name, v := range expanded.Env {
		add(v, secret.IsCredentialName(name))
	}
	for name, v := range expanded.Headers {
		add(v, secret.IsCredentialName(name))
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			add(strings.TrimSpace(cred), secret.IsCredentialName(name))
		}
	}
	// The secrets an argument or the URL carries as written, by the rule
	// config check's redaction follows (secret.ArgSecrets): what is
	// redacted there is scrubbed here. The URL's host is never one.
	addSpan := func(text string, sp secret.Span) {
		v := text[sp.Start:sp.End]
		add(v, sp.Credential)
		if _, password, ok := strings.Cut(v, ":"); ok && sp.Name == "userinfo" {
			add(password, true) // a server may say the password alone
		}
	}
	for _, sp := range secret.ArgSecrets(expanded.Args) {
		addSpan(expanded.Args[sp.Arg], sp.Span)
	}
	for _, sp := range secret.URLSecrets(expanded.URL) {
		addSpan(expanded.URL, sp)
	}
	if len(written.Args) == len(expanded.Args) {
		for i, a := range written.Args {
			for _, v := range referencedValues(a, expanded.Args[i]) {
				add(v, false)
			}
		}
	}
	for _, v := range referencedValues(written.URL, expanded.URL) {
		// The host is where the probe went, which a person needs to read in
		// an error; a variable that picks it is not a secret.
		if !isHostOf(expanded.URL, v) {
			add(v, false)
		}
	}
	slices.SortFunc(patterns, func(a, b pattern) int {
		if d := len(b.text) - len(a.text); d != 0 {
			return d
		}
		if a.word != b.word {
			if a.word {
				return 1 // the unconditional form first: it wins a tie
			}
			return -1
		}
		return strings.Compare(a.text, b.text)
	})
	// One pattern a text: the first (unconditional) form of a text wins.
	patterns = slices.CompactFunc(patterns, func(a, b pattern) bool { return a.text == b.text })
	var needles []string
	for i, p := range patterns {
		holdsAnother := false
		for j, q := range patterns {
			if j != i && len(q.text) < len(p.text) && strings.Contains(p.text, q.text) {
				holdsAnother = true
				break
			}
		}
		if !holdsAnother {
			needles = append(needles, p.text)
		}
	}
	s := Scrubber{patterns: patterns, needles: newNeedles(needles)}
	if len(patterns) > 0 {
		s.grams = &grams{}
	}
	return s
}

// forms are the patterns of one secret value v: the forms it may be found
// in once escapes are undone (see the top of this file). v is a secret
// when it is long or a credential; a form of it shorter than minSecretLen
// ("a  b  c  d" collapsed) is a whole-word match.
func forms(v string, credential bool) []pattern {
	if v == "" || len(v) < minSecretLen && !credential {
		return nil
	}
	var out []pattern
	text := func(f string) {
		if f != "" {
			out = append(out, pattern{text: f, word: len(f) < minSecretLen})
		}
	}
	text(v)
	text(strings.Join(strings.Fields(v), " ")) // whitespace collapsed, ends trimmed
	text(url.QueryEscape(v))                   // form-encoded: "+" for a space
	text(strings.ReplaceAll(v, " ", "+"))      // the same once its %XX escapes are undone

	// Encodings of the bytes: a short form of these would match unrelated
	// text, so they need a secret of four bytes or more.
	if len(v) < 4 {
		return out
	}
	const hexDigits, upperHex = "0123456789abcdef", "0123456789ABCDEF"
	for _, digits := range []string{hexDigits, upperHex} {
		h := make([]byte, 0, 2*len(v))
		for i := 0; i < len(v); i++ {
			h = append(h, digits[v[i]>>4], digits[v[i]&0xf])
		}
		out = append(out, pattern{text: string(h), run: isHexDigit})
	}
	for _, digits := range []string{hexDigits, upperHex} {
		// Hex with colons between the bytes, as fingerprints and key dumps
		// print it ("de:ad:be:ef").
		h := make([]byte, 0, 3*len(v))
		for i := 0; i < len(v); i++ {
			if i > 0 {
				h = append(h, ':')
			}
			h = append(h, digits[v[i]>>4], digits[v[i]&0xf])
		}
		out = append(out, pattern{text: string(h), run: isHexOrColon})
	}
	for _, f := range base64Cores(v) {
		out = append(out, pattern{text: f, run: isBase64Char})
	}
	for _, f := range base32Cores(v) {
		out = append(out, pattern{text: f, run: isBase32Char})
	}
	return out
}

// base64Cores are the parts of a base64 encoding that v's bytes alone
// decide, wherever v sits in the encoded text: a base64 character holds
// six bits, so where v starts at byte offset 1 or 2 of a three-byte group
// (after "user:" in an HTTP Basic credential, say) its first and last
// characters mix in the neighbouring bytes. For each of the three offsets
// k, v is encoded after k bytes and the characters whose bits all come from
// v are kept; then the same in the URL alphabet.
func base64Cores(v string) []string {
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out []string
	for _, core := range encodedCores(v, 6, std) {
		out = append(out, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	return out
}

// base32Cores are base64Cores for base32 (RFC 4648, five bits a
// character, five byte offsets), in its upper-case alphabet.
func base32Cores(v string) []string {
	return encodedCores(v, 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
}

// encodedCores encodes v, after each possible offset k of a group, with
// characters of width bits from alphabet, and keeps the characters whose
// bits all come from v: those of four characters or more.
func encodedCores(v string, width int, alphabet string) []string {
	var out []string
	for k := 0; k < width; k++ {
		if k > 0 && 8*k%width == 0 {
			break // the same alignment as a smaller offset
		}
		bits := make([]byte, 0, 8*(k+len(v)))
		for i := 0; i < k; i++ {
			bits = append(bits, make([]byte, 8)...)
		}
		for i := 0; i < len(v); i++ {
			for b := 7; b >= 0; b-- {
				bits = append(bits, v[i]>>b&1)
			}
		}
		// Character i covers bits [width*i, width*(i+1)): it is v's alone
		// when 8k <= width*i and width*(i+1) <= 8(k+len(v)).
		first, end := (8*k+width-1)/width, 8*(k+len(v))/width
		if end-first < 4 {
			continue
		}
		core := make([]byte, 0, end-first)
		for i := first; i < end; i++ {
			n := 0
			for _, b := range bits[width*i : width*i+width] {
				n = n<<1 | int(b)
			}
			core = append(core, alphabet[n])
		}
		out = append(out, string(core))
	}
	return out
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isHexOrColon(c byte) bool { return c == ':' || isHexDigit(c) }

// isBase32Char is a character of base32, either case, padding aside.
func isBase32Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '2' <= c && c <= '7'
}

// isBase64Char is a character of either base64 alphabet, padding aside.
func isBase64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// referencedValues returns what the ${...} references of written became in
// expanded: the text between the literal ends the two share. Both are cut
// at slashes first when they have as many pieces, so the key in
// "https://${HOST}/${KEY}/sse" comes out apart from the host.
func referencedValues(written, expanded string) []string {
	if !strings.Contains(written, "${") {
		return nil
	}
	wp, ep := strings.Split(written, "/"), strings.Split(expanded, "/")
	if len(wp) != len(ep) {
		wp, ep = []string{written}, []string{expanded}
	}
	var out []string
	for i, w := range wp {
		if !strings.Contains(w, "${") {
			continue
		}
		e := ep[i]
		// The shared ends stop at the first reference and after the last.
		pre := min(commonPrefix(w, e), strings.Index(w, "${"))
		suf := min(commonSuffix(w[pre:], e[pre:]), len(w)-1-strings.LastIndexByte(w, '}'))
		if v := e[pre : len(e)-suf]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// isHostOf reports whether v is the host of the URL raw, with or without
// its port.
func isHostOf(raw, v string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (v == u.Host || v == u.Hostname())
}

// str scrubs a string: every match of a pattern in it, or in it with its
// escapes undone (once, twice, three times), is replaced by
// config.Redacted, as one where matches overlap.
func (s Scrubber) str(v string) string {
	if len(s.patterns) == 0 {
		return v
	}
	escaped := mayEscape(v)
	if !escaped && !s.holds(v) {
		return v
	}
	var spans []span
	if s.holds(v) {
		spans = s.matches(v)
	}
	if escaped {
		spans = append(spans, s.escapedMatches(v)...)
	}
	if len(spans) == 0 {
		return v
	}
	return replaceSpans(v, spans)
}

// escapedMatches finds the patterns in v with its escapes undone: each
// kind apart and one after the other, up to maxDecodes times over. The
// spans are v's.
func (s Scrubber) escapedMatches(v string) []span {
	// step is one decoding: from is the text it decoded, by kind.
	type step struct {
		from string
		kind escapeKind
	}
	type decoded struct {
		text  string
		steps []step // from v, in order
	}
	var out []span
	queue := []decoded{{text: v}}
	for round := range maxDecodes {
		var next []decoded
		kinds := escapeKinds
		if round > 0 {
			// HTML references and lookalikes are undone on the text as
			// said, not again on each decoding: the decodings kept stay
			// as few as with two kinds (a hostile 4 MiB string is
			// decoded into at most 16 copies).
			kinds = escapeKinds[:2]
		}
		for _, d := range queue {
			for _, kind := range kinds {
				text, ok := unescape(d.text, kind)
				if !ok {
					continue
				}
				steps := append(slices.Clip(d.steps), step{d.text, kind})
				if s.holds(text) {
					spans := s.matches(text)
					for i := len(steps) - 1; i >= 0; i-- {
						spans = toEscaped(steps[i].from, steps[i].kind, spans)
					}
					out = append(out, spans...)
				}
				next = append(next, decoded{text: text, steps: steps})
			}
		}
		queue = next
	}
	return out
}

// span is the byte range [start, end) of a string.
type span struct{ start, end int }

// matches finds every pattern in v: longest first, a whole word only where
// the pattern says so, widened to the encoded run around it where it says
// so.
func (s Scrubber) matches(v string) []span {
	var out []span
	for _, p := range s.patterns {
		for i := 0; i+len(p.text) <= len(v); {
			j := strings.Index(v[i:], p.text)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(p.text)
			if p.word && (at > 0 && wordByte(v[at-1]) || end < len(v) && wordByte(v[end])) {
				i = at + 1
				continue
			}
			if p.run != nil {
				for at > 0 && p.run(v[at-1]) {
					at--
				}
				for end < len(v) && p.run(v[end]) {
					end++
				}
				for end < len(v) && v[end] == '=' { // base64 padding
					end++
				}
			}
			out = append(out, span{at, end})
			i = end
		}
	}
	return out
}

// replaceSpans replaces the spans of v, merged where they overlap or touch,
// by config.Redacted.
func replaceSpans(v string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(v[last:start])
		b.WriteString(config.Redacted)
		last = end
	}
	b.WriteString(v[last:])
	return b.String()
}

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// raw scrubs a JSON value: every string in it, object keys included, is
// decoded, scrubbed, and written back (re-encoded) only if that changed it,
// so the value stays valid JSON and a secret is caught however the server
// escaped it. A value that is not JSON is scrubbed as text.
func (s Scrubber) raw(v json.RawMessage) json.RawMessage {
	if len(s.patterns) == 0 || len(v) == 0 {
		return v
	}
	// The common case, one search per form over the whole value: no form
	// of a secret anywhere, and no escape that could spell one.
	escapes := mayEscape(view(v))
	if !escapes && !s.hit(v) {
		return v
	}
	if !json.Valid(v) {
		return json.RawMessage(s.str(string(v)))
	}
	var out []byte
	last := 0
	for i := 0; i < len(v); i++ {
		if v[i] != '"' {
			continue
		}
		end := stringEnd(v, i)
		tok, inner := v[i:end], v[i+1:end-1]
		escaped := mayEscape(view(inner))
		if !escaped && !s.hit(inner) {
			i = end - 1
			continue
		}
		var text string
		if bytes.IndexByte(inner, '\\') >= 0 {
			_ = json.Unmarshal(tok, &text) // a string of valid JSON: cannot fail
		} else {
			text = string(inner)
		}
		if scrubbed := s.str(text); scrubbed != text {
			out = append(append(out, v[last:i]...), quote(scrubbed)...)
			last = end
		}
		i = end - 1
	}
	if out == nil {
		return v
	}
	return append(out, v[last:]...)
}

// quote writes s as a JSON string, "<redacted>" as it reads.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stringEnd returns the index just past the JSON string starting at v[i],
// which is valid JSON.
func stringEnd(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// holds reports whether v holds any form of any secret (as a word or not).
func (s Scrubber) holds(v string) bool { return s.needles.in(v) }

// hit is holds for bytes, read in place.
func (s Scrubber) hit(b []byte) bool { return s.holds(view(b)) }

// view is b as a string without a copy, for reading only while b is not
// written (the scrubber only searches it).
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b)) //nolint:gosec // G103: audited: read only, and b outlives the string
}

// cut scrubs a text that may have been cut short. mcpwatch marks each cut
// with "…" (sanitize.Truncate and TruncateStart, the credential rule's
// quotes, a stderr tail whose start went, the probe's own messages), and
// a cut can halve a secret: a half is no longer the secret, but it still
// identifies it. So in a text that carries "…", besides whole secrets,
// every run of minSecretLen bytes or more of a secret goes, wherever it
// stands in the text (a quote cut on both sides inside a long token is
// such a run, and a quote can sit in the middle of a message); and next to
// each "…", a shorter start of a secret just before it, or end just after
// it, of four bytes or more.
func (s Scrubber) cut(v string) string {
	v = s.str(v)
	if len(s.patterns) == 0 || !strings.Contains(v, sanitize.Ellipsis) {
		return v
	}
	spans := s.grams.of(s.patterns).in(v)
	spans = append(spans, s.atCuts(v)...)
	if len(spans) == 0 {
		return v
	}
	return replaceSpans(v, spans)
}

// maxCutsRead bounds how many "…" of one text atCuts looks beside: a text
// mcpwatch cut holds one or two; a server's own text may hold thousands,
// where the runs of minSecretLen bytes are still found.
const maxCutsRead = 64

// atCuts finds, beside each "…" of v, the start of a secret (fewer than
// minSecretLen bytes, four or more) that ends just before it, and the end
// of one that starts just after it: what a cut left of a secret too short
// for the runs cut finds anywhere.
func (s Scrubber) atCuts(v string) []span {
	var out []span
	for at, n := 0, 0; n < maxCutsRead; n++ {
		i := strings.Index(v[at:], sanitize.Ellipsis)
		if i < 0 {
			break
		}
		e := at + i
		after := e + len(sanitize.Ellipsis)
		for _, p := range s.patterns {
			for k := min(len(p.text)-1, minSecretLen-1, e); k >= 4; k-- {
				if strings.HasSuffix(v[:e], p.text[:k]) {
					out = append(out, span{e - k, e})
					break
				}
			}
			for k := min(len(p.text)-1, minSecretLen-1, len(v)-after); k >= 4; k-- {
				if strings.HasPrefix(v[after:], p.text[len(p.text)-k:]) {
					out = append(out, span{after, after + k})
					break
				}
			}
		}
		at = after
	}
	return out
}

// Result returns a scrubbed copy of r; r itself is left alone.
func (s Scrubber) Result(r *probe.Result) *probe.Result {
	if len(s.patterns) == 0 {
		// No secret to look for (most servers): the copy by reflection
		// would copy every tool and every string for nothing. Everything
		// that changes a result copies it first, so sharing is safe.
		c := *r
		return &c
	}
	c := scrubCopy(s, *r)
	return &c
}

// secretNames returns the scrubbed names of the tools whose name held a
// secret: said as the server listed them, scrubbed as result scrubbed them.
func secretNames(said, scrubbed []probe.Tool) []string {
	var names []string
	for i, t := range scrubbed {
		if t.Name != said[i].Name {
			names = append(names, t.Name)
		}
	}
	return names
}

package runner

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// What counts as a secret, and where it is replaced by config.Redacted:
//
//   - Every expanded env and header value, the credential after a header's
//     scheme word ("Bearer <token>"), and what ${...} references put into
//     the arguments and the URL (not the URL's host).
//   - A value of minSecretLen characters or more is replaced wherever it
//     appears, as written and in the encodings a server echoes it in:
//     URL-encoded (query and path escaping), base64 (standard and URL
//     alphabets, with and without padding) and JSON-escaped ("\/", "\u0026").
//     Inside JSON (schemas, transcripts) every string, keys included, is
//     compared decoded, so any JSON escaping of it is caught too.
//   - A shorter value is replaced only where it stands as a whole word (not
//     next to a letter or a digit: the whole of a server name or version,
//     "hunter2" in "bad password hunter2" or in a tool named "leak_hunter2"),
//     and only when the name it is configured under says credential
//     (secret.IsCredentialName, the rule config check's redaction uses too:
//     Authorization, X-Api-Key, Cookie, REPORT_PIN, DB_PASSWORD, ...). Other short values
//     (DEBUG=1, LOG_LEVEL=info, REPORT_SCOPE=read) are settings: replacing
//     every "1" or "info" a server says would make its output unreadable.
//
// minSecretLen is the length from which a value is a secret wherever it is
// configured, and is replaced even inside a longer word.
const minSecretLen = 8

// scrubber removes a server's secret values from what the server or the
// probe said: a server may echo its token on stderr, in an error, in a tool
// name or description, or in a schema, and nothing mcpwatch prints or keeps
// may carry it.
type scrubber struct {
	patterns []pattern // longest first, so a token inside a header value goes with it
	// needles are the patterns that hold no other one: text holds some
	// pattern exactly when it holds a needle, so one search per needle
	// tells whether there is anything to replace.
	needles     []string
	needleBytes [][]byte
}

// pattern is one form of one secret.
type pattern struct {
	text string
	word bool // replaced only as a whole word (a short secret)
}

// newScrubber collects the secrets of a target (see above). written is the
// target before expansion; only its Args and URL are read. A key in a URL
// path ("https://host/${KEY}/sse") shows in every error that names the URL;
// a referenced argument may be echoed on stderr.
func newScrubber(written, expanded probe.Target) scrubber {
	var patterns []pattern
	add := func(v string, credential bool) {
		long := len(v) >= minSecretLen
		if v == "" || !long && !credential {
			return
		}
		for _, form := range encodings(v) {
			patterns = append(patterns, pattern{text: form, word: !long})
		}
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
		return strings.Compare(a.text, b.text)
	})
	patterns = slices.CompactFunc(patterns, func(a, b pattern) bool { return a.text == b.text && a.word == b.word })
	var needles []string
	for i, p := range patterns {
		holdsAnother := false
		for j, q := range patterns {
			if j != i && len(q.text) <= len(p.text) && q.text != p.text && strings.Contains(p.text, q.text) {
				holdsAnother = true
				break
			}
		}
		if !holdsAnother && !slices.Contains(needles, p.text) {
			needles = append(needles, p.text)
		}
	}
	needleBytes := make([][]byte, len(needles))
	for i, n := range needles {
		needleBytes[i] = []byte(n)
	}
	return scrubber{patterns: patterns, needles: needles, needleBytes: needleBytes}
}

// encodings are the forms a server may echo v in: as is, URL-encoded,
// base64 and JSON-escaped.
func encodings(v string) []string {
	forms := []string{
		v,
		url.QueryEscape(v), url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)),
	}
	for _, html := range []bool{false, true} {
		quoted := string(quoteJSON(v, html))
		escaped := quoted[1 : len(quoted)-1]
		forms = append(forms, escaped, strings.ReplaceAll(escaped, "/", `\/`))
	}
	slices.Sort(forms)
	return slices.Compact(forms)
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

// str scrubs a string.
func (s scrubber) str(v string) string {
	if !s.holds(v) {
		return v
	}
	for _, p := range s.patterns {
		if !strings.Contains(v, p.text) {
			continue
		}
		if p.word {
			v = replaceWord(v, p.text)
		} else {
			v = strings.ReplaceAll(v, p.text, config.Redacted)
		}
	}
	return v
}

// replaceWord replaces w in v where it is not next to a letter or a digit
// (any byte of a multi-byte character counts as a letter).
func replaceWord(v, w string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+len(w) <= len(v); {
		j := strings.Index(v[i:], w)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(w)
		if (at == 0 || !wordByte(v[at-1])) && (end == len(v) || !wordByte(v[end])) {
			b.WriteString(v[last:at])
			b.WriteString(config.Redacted)
			last = end
			i = end
			continue
		}
		i = at + 1
	}
	if last == 0 {
		return v
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
func (s scrubber) raw(v json.RawMessage) json.RawMessage {
	if len(s.patterns) == 0 || len(v) == 0 {
		return v
	}
	// The common case, one search per form over the whole value: no form
	// of a secret anywhere, and no escape that could spell one.
	escapes := bytes.IndexByte(v, '\\') >= 0
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
		escaped := bytes.IndexByte(inner, '\\') >= 0
		if !escaped && !s.hit(inner) {
			i = end - 1
			continue
		}
		var text string
		if escaped {
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
func quote(s string) []byte { return quoteJSON(s, false) }

func quoteJSON(s string, escapeHTML bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
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

// hit reports whether b holds any form of any secret (as a word or not).
func (s scrubber) hit(b []byte) bool {
	for _, n := range s.needleBytes {
		if bytes.Contains(b, n) {
			return true
		}
	}
	return false
}

// holds is hit for a string.
func (s scrubber) holds(v string) bool {
	for _, n := range s.needles {
		if strings.Contains(v, n) {
			return true
		}
	}
	return false
}

// cut scrubs a line that may have been cut short ("…"): besides whole
// secrets, the start of one left at the cut goes too.
func (s scrubber) cut(v string) string {
	v = s.str(v)
	body, cutShort := strings.CutSuffix(v, "…")
	if !cutShort {
		return v
	}
	for _, p := range s.patterns {
		secret := p.text
		for n := min(len(secret)-1, len(body)); n >= 4; n-- {
			if strings.HasSuffix(body, secret[:n]) {
				return body[:len(body)-n] + config.Redacted + "…"
			}
		}
	}
	return v
}

// result returns a scrubbed copy of r; r itself is left alone.
func (s scrubber) result(r *probe.Result) *probe.Result {
	c := scrubCopy(s, *r)
	return &c
}

// Scrub returns a copy of r with the secret values of the target (see
// newScrubber) replaced by config.Redacted, for a caller that ran the probe
// itself (mcpwatch probe); r is left alone. written is the target before
// ${...} expansion, expanded the one probed.
func Scrub(written, expanded probe.Target, r *probe.Result) *probe.Result {
	return newScrubber(written, expanded).result(r)
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

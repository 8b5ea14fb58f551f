package runner

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/probe"
)

// The property of the scrubber: no encoding of a secret survives it. For
// random secrets (ASCII and not, short ones under a credential's name and
// long ones under any name), each embedded in random text in each
// encoding a server or a library may echo it in, the scrubbed text holds
// neither that encoding nor, decoded any way the oracle below knows, the
// secret.

// encoding is one way of writing a secret into a server's output.
type encoding struct {
	name string
	enc  func(secret string, r *rand.Rand) string
}

var encodings = []encoding{
	{"as written", func(s string, _ *rand.Rand) string { return s }},
	{"url.QueryEscape", func(s string, _ *rand.Rand) string { return url.QueryEscape(s) }},
	{"url.PathEscape", func(s string, _ *rand.Rand) string { return url.PathEscape(s) }},
	{"encodeURIComponent", func(s string, _ *rand.Rand) string { return encodeURIComponent(s) }},
	{"percent, every byte, lowercase", func(s string, _ *rand.Rand) string { return percentEvery(s, "%02x") }},
	{"percent, every byte, uppercase", func(s string, _ *rand.Rand) string { return percentEvery(s, "%02X") }},
	{"JSON, ASCII only (json.dumps)", func(s string, r *rand.Rand) string { return jsonASCII(s, r.Intn(2) == 0) }},
	{"JSON (encoding/json)", func(s string, _ *rand.Rand) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }},
	{"Go %q", func(s string, _ *rand.Rand) string { q := strconv.QuoteToASCII(s); return q[1 : len(q)-1] }},
	{"percent of JSON", func(s string, r *rand.Rand) string { return url.QueryEscape(jsonASCII(s, r.Intn(2) == 0)) }},
	{"hex", func(s string, _ *rand.Rand) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string, _ *rand.Rand) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
	{"base64 of user:secret", func(s string, r *rand.Rand) string {
		// A user of 0 to 5 bytes puts the secret at every offset of a
		// base64 group; either alphabet, padded or not.
		user := strings.Repeat("u", r.Intn(6))
		encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
		return encs[r.Intn(len(encs))].EncodeToString([]byte(user + ":" + s))
	}},
	{"whitespace collapsed", func(s string, _ *rand.Rand) string { return strings.Join(strings.Fields(s), " ") }},
}

// secretCase is one generated case of the property.
type secretCase struct {
	Secret, Name string
	Before       string
	After        string
	Encoding     int
	Seed         int64
}

// Generate makes a secret: short (4 to 7 bytes, under a credential's
// name) or long (8 to 40 bytes, under any name); ASCII, or with runes
// from Latin-1 to emoji; sometimes with runs of spaces.
func (secretCase) Generate(r *rand.Rand, _ int) reflect.Value {
	var c secretCase
	short := r.Intn(3) == 0
	n := 8 + r.Intn(33)
	c.Name = []string{"SETTING", "REPORT_URL_PART", "API_TOKEN"}[r.Intn(3)]
	if short {
		n = 4 + r.Intn(4)
		c.Name = []string{"API_KEY", "REPORT_PIN", "X-Session"}[r.Intn(3)]
	}
	nonASCII := r.Intn(2) == 0
	spaces := !short && r.Intn(4) == 0
	var b strings.Builder
	for b.Len() < n {
		switch k := r.Intn(10); {
		case nonASCII && k == 0:
			b.WriteRune([]rune("éüßñøЖж中文🔑😀")[r.Intn(11)])
		case spaces && k == 1:
			b.WriteString(strings.Repeat(" ", 1+r.Intn(3)))
		default:
			const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789&=+/?%#:@!$*-_.~"
			b.WriteByte(chars[r.Intn(len(chars))])
		}
	}
	c.Secret = strings.TrimSpace(b.String())
	for len(c.Secret) < 4 || !short && len(c.Secret) < minSecretLen || !utf8.ValidString(c.Secret) {
		c.Secret += "k9"
	}
	c.Before, c.After = filler(r), filler(r)
	c.Encoding = r.Intn(len(encodings))
	c.Seed = r.Int63()
	return reflect.ValueOf(c)
}

// filler is random text around a secret: words and punctuation, some
// that look like base64 or hex.
func filler(r *rand.Rand) string {
	words := []string{"error:", "token", "rejected", "for", "user", "GET", "/mcp?x=1&y=", "QUJD", "ff00", "=", "\"", "\\n", "%20", "…", "é"}
	var parts []string
	for range r.Intn(6) {
		parts = append(parts, words[r.Intn(len(words))])
	}
	return strings.Join(parts, " ")
}

// said is the case's text as the server says it: the secret in its
// encoding, set apart from the text around it by spaces (a short secret
// counts only as a whole word).
func (c secretCase) said() (text, encoded string) {
	encoded = encodings[c.Encoding].enc(c.Secret, rand.New(rand.NewSource(c.Seed))) //nolint:gosec // G404: seeded, so a case reads the same every run
	return c.Before + " " + encoded + " " + c.After, encoded
}

func TestScrubberNoEncodingSurvives(t *testing.T) {
	// seen counts the cases of each encoding by kind of secret, so the
	// test fails if the generator stops making some of them.
	type kind struct {
		encoding        int
		short, nonASCII bool
	}
	seen := map[kind]int{}
	property := func(c secretCase) bool {
		seen[kind{c.Encoding, len(c.Secret) < minSecretLen, !isASCII(c.Secret)}]++
		s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{c.Name: c.Secret}}})
		text, encoded := c.said()
		got := s.str(text)
		leaked := leaks(got, c.Secret)
		if leaked == "" && strings.Contains(got, encoded) && len(encoded) >= 4 {
			leaked = "the encoded form as embedded"
		}
		// Inside JSON, as a schema or a transcript carries it.
		raw := s.raw(json.RawMessage(`{"d":` + string(quote(text)) + `}`))
		if leaked == "" && !json.Valid(raw) {
			leaked = "raw: not JSON any more: " + string(raw)
		}
		if l := leaks(said(raw), c.Secret); leaked == "" && l != "" {
			leaked = "raw: " + l
		}
		if leaked != "" {
			t.Errorf("%s %q (%s) in %q\nscrubbed: %q\nleaks: %s", c.Name, c.Secret, encodings[c.Encoding].name, text, got, leaked)
		}
		return leaked == ""
	}
	cfg := &quick.Config{MaxCount: 1000, Rand: rand.New(rand.NewSource(17))} //nolint:gosec // G404: seeded, so the cases are the same every run
	if testing.Short() {
		cfg.MaxCount = 200
	}
	if err := quick.Check(property, cfg); err != nil {
		t.Error(err)
	}
	for e := range encodings {
		for _, short := range []bool{false, true} {
			for _, nonASCII := range []bool{false, true} {
				if seen[kind{e, short, nonASCII}] == 0 && !testing.Short() {
					t.Errorf("no case of %s with short=%v, non-ASCII=%v", encodings[e].name, short, nonASCII)
				}
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// said is the string the scrubbed {"d": ...} holds, as a reader of the
// JSON gets it (its escapes, such as \u0000, are not text).
func said(raw json.RawMessage) string {
	var v struct{ D string }
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v.D
}

// leaks reports how text still holds secret ("" when it does not): as
// written, with its whitespace collapsed, once percent, JSON and Go
// escapes are undone (up to three times), or inside any hex or base64 run
// decoded at any offset. It is the oracle of the property, written apart
// from the scrubber's own decoding.
func leaks(text, secret string) string {
	collapsed := strings.Join(strings.Fields(secret), " ")
	layers := []string{text}
	for range 3 {
		layers = append(layers, oracleUnescape(layers[len(layers)-1]))
	}
	for i, l := range layers {
		switch {
		case strings.Contains(l, secret):
			return fmt.Sprintf("as written, after %d decodings", i)
		case len(collapsed) >= 4 && strings.Contains(l, collapsed):
			return fmt.Sprintf("whitespace collapsed, after %d decodings", i)
		}
		for _, run := range hexRun.FindAllString(l, -1) {
			for off := 0; off < 2 && off < len(run); off++ {
				b, _ := hex.DecodeString(run[off : off+(len(run)-off)/2*2])
				if strings.Contains(string(b), secret) {
					return "in hex " + run
				}
			}
		}
		for _, run := range base64Run.FindAllString(l, -1) {
			std := strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimRight(run, "="))
			for off := 0; off < 4 && off < len(std); off++ {
				part := std[off:]
				part = part[:len(part)/4*4+map[int]int{0: 0, 1: 0, 2: 2, 3: 3}[len(part)%4]]
				b, err := base64.RawStdEncoding.DecodeString(part)
				if err == nil && strings.Contains(string(b), secret) {
					return "in base64 " + run
				}
			}
		}
	}
	return ""
}

var (
	hexRun      = regexp.MustCompile(`[0-9a-fA-F]{8,}`)
	base64Run   = regexp.MustCompile(`[A-Za-z0-9+/_-]{4,}=*`)
	percentEsc  = regexp.MustCompile(`%[0-9a-fA-F]{2}`)
	unicodeEsc  = regexp.MustCompile(`\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}`)
	byteEsc     = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)
	longEsc     = regexp.MustCompile(`\\U[0-9a-fA-F]{8}`)
	simpleEsc   = regexp.MustCompile(`\\["\\/bfnrt']`)
	simpleValue = map[string]string{`\"`: `"`, `\\`: `\`, `\/`: `/`, `\b`: "\b", `\f`: "\f", `\n`: "\n", `\r`: "\r", `\t`: "\t", `\'`: "'"}
)

// oracleUnescape undoes every escape it finds, each kind in its own pass.
func oracleUnescape(s string) string {
	s = percentEsc.ReplaceAllStringFunc(s, func(m string) string { b, _ := hex.DecodeString(m[1:]); return string(b) })
	s = unicodeEsc.ReplaceAllStringFunc(s, func(m string) string {
		var out string
		if err := json.Unmarshal([]byte(`"`+m+`"`), &out); err != nil {
			return m
		}
		return out
	})
	s = longEsc.ReplaceAllStringFunc(s, func(m string) string {
		r, err := strconv.Unquote(`"` + m + `"`)
		if err != nil {
			return m // not a character
		}
		return r
	})
	s = byteEsc.ReplaceAllStringFunc(s, func(m string) string { b, _ := hex.DecodeString(m[2:]); return string(b) })
	return simpleEsc.ReplaceAllStringFunc(s, func(m string) string { return simpleValue[m] })
}

// encodeURIComponent escapes as JavaScript's function does: all but
// letters, digits and - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// percentEvery escapes every byte of s, with format's hex digits.
func percentEvery(s, format string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + fmt.Sprintf(format, s[i]))
	}
	return b.String()
}

// jsonASCII escapes s as Python's json.dumps does by default: everything
// but printable ASCII as \uXXXX, surrogate pairs beyond the BMP.
func jsonASCII(s string, upper bool) string {
	format := `\u%04x`
	if upper {
		format = `\u%04X`
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, format+format, r1, r2)
		default:
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
}

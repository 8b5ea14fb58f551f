package runner

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A secret may come back escaped, in any mix: percent-encoded by a URL
// library (some bytes or every byte, hex digits in either case), or
// escaped in a JSON or Go string (\u00e9, a surrogate pair, \U0001f511,
// \/, \n, \x41). Rather than list every way of escaping a secret, the
// scrubber undoes the escapes of the text it scrubs and looks for the
// secret in the result; what it finds there is mapped back to the bytes of
// the text that spelled it. Only the decoded text is kept: mapping a
// match back walks the escaped text again, which is rare (a secret was
// found) and keeps the memory of a decoding to one copy of the text, even
// for a hostile server's 4 MiB of "%41".

// escapeKind is which escapes are undone: percent-encoding, or the
// backslash escapes of JSON and Go strings. They are undone apart, as well
// as one after the other, so that a secret that itself holds "%2C" is
// found in a JSON string that escapes its other characters.
type escapeKind int

const (
	percentEscapes escapeKind = iota
	backslashEscapes
	// htmlEscapes are HTML's character references: &amp;, &lt;, &#NN;,
	// &#xHH; and the like.
	htmlEscapes
	// lookalikes are the characters that show as others: fullwidth forms
	// ("ｓｋ－ｌｉｖｅ" for "sk-live"), no-break and other Unicode spaces
	// (read as a space), and zero-width characters (read as nothing).
	lookalikes
)

// escapeKinds are every kind, in the order they are tried.
var escapeKinds = []escapeKind{percentEscapes, backslashEscapes, htmlEscapes, lookalikes}

// index is where the first escape of the kind may start in s, -1 for
// nowhere.
func (k escapeKind) index(s string) int {
	switch k {
	case backslashEscapes:
		return strings.IndexByte(s, '\\')
	case htmlEscapes:
		return strings.IndexByte(s, '&')
	case lookalikes:
		for i := 0; i < len(s); i++ {
			if isLookalikeLead(s[i]) {
				return i
			}
		}
		return -1
	}
	return strings.IndexByte(s, '%')
}

// isLookalikeLead is the first byte of the UTF-8 of a lookalike: U+00A0
// (C2), U+2000-U+2060 (E2), U+3000 (E3), U+FEFF and U+FF01-U+FF5E (EF).
func isLookalikeLead(c byte) bool { return c == 0xc2 || c == 0xe2 || c == 0xe3 || c == 0xef }

// mayEscape reports whether text holds the mark of an escape unescape
// undoes.
func mayEscape(text string) bool {
	if strings.IndexByte(text, '%') >= 0 || strings.IndexByte(text, '\\') >= 0 || strings.IndexByte(text, '&') >= 0 {
		return true
	}
	for i := 0; i < len(text); i++ {
		if isLookalikeLead(text[i]) {
			return true
		}
	}
	return false
}

// eachEscape calls f for each escape of kind in s, in order: the bytes
// s[at:at+n] decode to b (valid only during the call).
func eachEscape(s string, kind escapeKind, f func(at, n int, b []byte)) {
	var buf [utf8.UTFMax]byte
	for i := kind.index(s); i >= 0 && i < len(s); {
		n, b := escapeAt(s[i:], kind, buf[:0])
		if n > 0 {
			f(i, n, b)
		} else {
			n = 1
		}
		next := kind.index(s[i+n:])
		if next < 0 {
			return
		}
		i += n + next
	}
}

// escapeAt decodes the escape at the start of s (which starts with the
// kind's mark) into buf: its length in s, 0 when s starts with none.
func escapeAt(s string, kind escapeKind, buf []byte) (int, []byte) {
	switch kind {
	case htmlEscapes:
		return htmlEscapeAt(s, buf)
	case lookalikes:
		return lookalikeAt(s, buf)
	}
	if kind == percentEscapes {
		if len(s) >= 3 && isHexDigit(s[1]) && isHexDigit(s[2]) {
			return 3, append(buf, unhex(s[1])<<4|unhex(s[2]))
		}
		return 0, nil
	}
	if len(s) < 2 {
		return 0, nil
	}
	if b, ok := simpleEscape(s[1]); ok {
		return 2, append(buf, b)
	}
	switch s[1] {
	case 'x':
		if len(s) >= 4 && isHexDigit(s[2]) && isHexDigit(s[3]) {
			return 4, append(buf, unhex(s[2])<<4|unhex(s[3]))
		}
	case 'u':
		if r, n := unicodeEscape(s); n > 0 {
			return n, utf8.AppendRune(buf, r)
		}
	case 'U':
		if r, ok := hex8(s); ok {
			return 10, utf8.AppendRune(buf, r)
		}
	}
	return 0, nil
}

// simpleEscape reads the one-letter escapes of JSON and Go strings.
func simpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/', '\'':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'v':
		return '\v', true
	case 'a':
		return '\a', true
	}
	return 0, false
}

// unescape undoes the escapes of kind in s, once; ok is false when s has
// none.
func unescape(s string, kind escapeKind) (decoded string, ok bool) {
	if kind.index(s) < 0 {
		return "", false
	}
	var b strings.Builder
	last := 0
	eachEscape(s, kind, func(at, n int, dec []byte) {
		if b.Cap() == 0 {
			b.Grow(len(s)) // decoded text is never longer
		}
		b.WriteString(s[last:at])
		b.Write(dec)
		last = at + n
	})
	if last == 0 {
		return "", false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// toEscaped maps spans of unescape(s, kind) to the spans of s that spelled
// them: an escape a span starts or ends inside is taken whole.
func toEscaped(s string, kind escapeKind, spans []span) []span {
	// The positions to map, in order: each span's first and last byte.
	type query struct {
		pos, span int
		last      bool
	}
	qs := make([]query, 0, 2*len(spans))
	for i, m := range spans {
		qs = append(qs, query{m.start, i, false}, query{m.end - 1, i, true})
	}
	slices.SortFunc(qs, func(a, b query) int { return a.pos - b.pos })
	out := make([]span, len(spans))
	q := 0
	// resolve answers the queries before decoded position end, in a run of
	// the decoded text that came from s[from:to] and starts at decoded
	// position at: a literal run maps byte for byte, an escape as a whole.
	resolve := func(end, at, from, to int, literal bool) {
		for ; q < len(qs) && qs[q].pos < end; q++ {
			start, stop := from, to
			if literal {
				start = from + qs[q].pos - at
				stop = start + 1
			}
			if qs[q].last {
				out[qs[q].span].end = stop
			} else {
				out[qs[q].span].start = start
			}
		}
	}
	pos, last := 0, 0 // decoded position of s[last]
	eachEscape(s, kind, func(at, n int, dec []byte) {
		resolve(pos+at-last, pos, last, at, true)
		pos += at - last
		resolve(pos+len(dec), pos, at, at+n, false)
		pos += len(dec)
		last = at + n
	})
	resolve(pos+len(s)-last, pos, last, len(s), true)
	return out
}

// unicodeEscape reads "\uXXXX" at the start of s, or a surrogate pair
// "\uD83D\uDE00" as one rune; n is 0 when s starts with neither.
func unicodeEscape(s string) (r rune, n int) {
	r1, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r1) {
		if r2, ok := hex4(s[6:]); ok {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return r, 12
			}
		}
		return 0, 0 // a lone surrogate spells no character
	}
	return r1, 6
}

// hex4 reads "\uXXXX" at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		if !isHexDigit(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

// hex8 reads "\UXXXXXXXX" (Go, Python) at the start of s: a valid rune.
func hex8(s string) (rune, bool) {
	if len(s) < 10 || s[0] != '\\' || s[1] != 'U' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[2:10]) {
		if !isHexDigit(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, utf8.ValidRune(r)
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// htmlEscapeAt decodes the character reference at the start of s (which
// starts with "&"): a named one of the few a server's HTML escaping
// writes, or a numeric one, decimal or hex, with its ";".
func htmlEscapeAt(s string, buf []byte) (int, []byte) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 10 {
		return 0, nil
	}
	name := s[1:end]
	switch name {
	case "amp":
		return end + 1, append(buf, '&')
	case "lt":
		return end + 1, append(buf, '<')
	case "gt":
		return end + 1, append(buf, '>')
	case "quot":
		return end + 1, append(buf, '"')
	case "apos":
		return end + 1, append(buf, '\'')
	case "nbsp":
		return end + 1, append(buf, ' ')
	}
	if name[0] != '#' || len(name) < 2 {
		return 0, nil
	}
	digits, base := name[1:], rune(10)
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	if digits == "" {
		return 0, nil
	}
	var r rune
	for _, c := range []byte(digits) {
		switch {
		case base == 10 && '0' <= c && c <= '9', base == 16 && isHexDigit(c):
			r = r*base + rune(unhex(c))
		default:
			return 0, nil
		}
	}
	if !utf8.ValidRune(r) || r == 0 {
		return 0, nil
	}
	return end + 1, utf8.AppendRune(buf, r)
}

// lookalikeAt reads the lookalike at the start of s: a fullwidth form as
// its ASCII character, a Unicode space as a space, a zero-width character
// as nothing.
func lookalikeAt(s string, buf []byte) (int, []byte) {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r >= 0xff01 && r <= 0xff5e:
		return n, append(buf, byte(r-0xff01+'!'))
	case r == 0x00a0, r >= 0x2000 && r <= 0x200a, r == 0x202f, r == 0x205f, r == 0x3000:
		return n, append(buf, ' ')
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff:
		return n, buf[:0:0]
	}
	return 0, nil
}

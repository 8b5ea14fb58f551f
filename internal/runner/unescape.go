package runner

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A secret may come back escaped, in any mix: percent-encoded by a URL
// library (some bytes or every byte, hex digits in either case), or
// escaped in a JSON or Go string (\u00e9, a surrogate pair, \U0001f511,
// \/, \n, \x41). Rather than list every way of escaping a secret, the scrubber
// undoes the escapes of the text it scrubs and looks for the secret in
// the result; what it finds there is mapped back to the bytes of the text
// that spelled it.

// layer is a text with its escapes undone once.
type layer struct {
	text string
	// escapes are the escapes undone, in order: everything between them
	// was copied as it was.
	escapes []undone
}

// undone is one escape: the bytes [out, out+outLen) of the layer's text
// came from the bytes [in, in+inLen) of the escaped text.
type undone struct{ out, outLen, in, inLen int }

// escapeKind is which escapes unescape undoes: percent-encoding, or the
// backslash escapes of JSON and Go strings. They are undone apart, as well
// as one after the other, so that a secret that itself holds "%2C" is
// found in a JSON string that escapes its other characters.
type escapeKind int

const (
	percentEscapes escapeKind = iota
	backslashEscapes
)

// unescape undoes the escapes of kind in s, once; nil when s has none.
func unescape(s string, kind escapeKind) *layer {
	mark := byte('%')
	if kind == backslashEscapes {
		mark = '\\'
	}
	if strings.IndexByte(s, mark) < 0 {
		return nil
	}
	var out []byte
	var escapes []undone
	last := 0 // s[last:i] is yet to be copied
	emit := func(i, n int, b []byte) {
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		out = append(out, s[last:i]...)
		escapes = append(escapes, undone{out: len(out), outLen: len(b), in: i, inLen: n})
		out = append(out, b...)
		last = i + n
	}
	for i := 0; i < len(s); i++ {
		if s[i] != mark {
			continue
		}
		switch s[i] {
		case '%':
			if i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
				emit(i, 3, []byte{unhex(s[i+1])<<4 | unhex(s[i+2])})
				i += 2
			}
		case '\\':
			if i+1 >= len(s) {
				continue
			}
			if b, ok := simpleEscapes[s[i+1]]; ok {
				emit(i, 2, []byte{b})
				i++
				continue
			}
			switch s[i+1] {
			case 'x':
				if i+3 < len(s) && isHexDigit(s[i+2]) && isHexDigit(s[i+3]) {
					emit(i, 4, []byte{unhex(s[i+2])<<4 | unhex(s[i+3])})
					i += 3
				}
			case 'u':
				r, n := unicodeEscape(s[i:])
				if n > 0 {
					emit(i, n, utf8.AppendRune(nil, r))
					i += n - 1
				}
			case 'U':
				if r, ok := hex8(s[i:]); ok {
					emit(i, 10, utf8.AppendRune(nil, r))
					i += 9
				}
			}
		}
	}
	if escapes == nil {
		return nil
	}
	out = append(out, s[last:]...)
	return &layer{text: string(out), escapes: escapes}
}

// simpleEscapes are the one-letter escapes of JSON and Go strings.
var simpleEscapes = map[byte]byte{
	'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', 'a': '\a',
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

// toParent maps a span of the layer's text to the span of the escaped
// text that spelled it: an escape the span starts or ends inside is taken
// whole.
func (l *layer) toParent(m span) span {
	return span{start: l.parentStart(m.start), end: l.parentEnd(m.end - 1)}
}

// parentStart is where in the escaped text byte p of the layer came from.
func (l *layer) parentStart(p int) int {
	e, ok := l.escapeAt(p)
	switch {
	case !ok:
		return p
	case p < e.out+e.outLen:
		return e.in
	}
	return e.in + e.inLen + p - (e.out + e.outLen)
}

// parentEnd is where in the escaped text the bytes that gave byte p of the
// layer end.
func (l *layer) parentEnd(p int) int {
	e, ok := l.escapeAt(p)
	switch {
	case !ok:
		return p + 1
	case p < e.out+e.outLen:
		return e.in + e.inLen
	}
	return e.in + e.inLen + p - (e.out + e.outLen) + 1
}

// escapeAt is the last escape that starts at or before byte p of the
// layer.
func (l *layer) escapeAt(p int) (undone, bool) {
	i := sort.Search(len(l.escapes), func(i int) bool { return l.escapes[i].out > p })
	if i == 0 {
		return undone{}, false
	}
	return l.escapes[i-1], true
}

// Package sanitize makes a string that an MCP server sent (a tool name, an
// error, a stderr line, its own name) safe to print where a person or a CI
// runner reads it: a terminal, a CI log, a log line, a GitHub workflow
// command. Every text output of mcpwatch passes untrusted strings through
// Text; JSON and HTML outputs escape by their own rules. It also holds the
// text helpers every output shares (cut.go): Truncate and TruncateStart,
// which cut only between runes, OneLine, and LastLines and LastLine for a
// stderr tail.
//
// It imports nothing of ours, so any package may use it: probe and the
// probetest kit too (a package inside this module may import internal/; a
// user of the kit gets it along and never names it).
package sanitize

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text returns s on one line with nothing a terminal or a CI runner would
// act on:
//
//   - control characters, line breaks included, are escaped as Go writes
//     them ("\n", "\r", "\t", "\x1b", "\u0085"), so a server cannot start a
//     line of its own in a CI log, nor send an escape sequence (colors, a
//     cleared screen, a window title, an OSC 8 link) to a terminal;
//   - the Unicode line and paragraph separators and the bidirectional
//     controls, which reorder or hide text as displayed ("Trojan Source"),
//     are escaped the same way ("\u2028", "\u202e");
//   - bytes that are not UTF-8 are escaped ("\xff");
//   - a string that would begin a line with a workflow command of GitHub
//     Actions ("::error::...", "::stop-commands::...") or Azure Pipelines
//     ("##vso[...]", "##[...]") has its first character escaped ("\x3a",
//     "\x23"), since a runner reads commands from any line of a step's
//     output that starts with one, after leading spaces, and mcpwatch
//     prints some server strings at the start of a line ("  name").
//
// Everything else, backslashes included, is kept, and a string with
// nothing to escape is returned as it is.
func Text(s string) string {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	command := strings.HasPrefix(s[lead:], "::") || strings.HasPrefix(s[lead:], "##")
	if !command && clean(s) {
		return s
	}
	if !command {
		lead = -1
	}
	return escape(s, lead, unsafe)
}

// Layout is Text for text a page lays out itself (a status page, a <pre>
// block of stderr lines): the same visible escapes, but line breaks and
// tabs are kept, which HTML shows as the page's layout says, and a
// workflow command means nothing there. What it escapes (bidirectional
// overrides, C1 and other controls, separators, bytes that are not UTF-8)
// would reorder, hide or spoof text as displayed.
func Layout(s string) string {
	if cleanLaid(s) {
		return s
	}
	return escape(s, -1, unsafeLaid)
}

// cleanLaid: nothing in s for Layout to escape. ASCII is judged byte by
// byte, the common case of a whole page.
func cleanLaid(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\n', c == '\t':
			i++
			continue
		case c < utf8.RuneSelf:
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeLaid is unsafe, but for the line break and the tab.
func unsafeLaid(r rune) bool { return r != '\n' && r != '\t' && unsafe(r) }

// escape writes s with each rune that esc says, each byte that is not
// UTF-8, and the byte at lead (a workflow command's first; -1: none)
// escaped as Go writes them.
func escape(s string, lead int, esc func(rune) bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case i == lead:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case esc(r):
			q := strconv.QuoteRune(r) // "'\n'", "'\x1b'", "'\u2028'"
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines returns Text of each string, in a new slice.
func Lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}

// Join is strings.Join of Lines(ss).
func Join(ss []string, sep string) string {
	return strings.Join(Lines(ss), sep)
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return false
			}
			return cleanUnicode(s[i:])
		}
	}
	return true
}

func cleanUnicode(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafe: a rune a terminal or a text layout acts on rather than shows.
func unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true // C0 controls (ESC, line breaks, BEL, ...) and DEL
	case r >= 0x80 && r <= 0x9f:
		return true // C1 controls: 0x9b is CSI on some terminals, 0x85 a line break
	case r == 0x2028 || r == 0x2029:
		return true // line and paragraph separators
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks, embeddings, overrides and isolates
	}
	return false
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

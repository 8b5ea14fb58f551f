package sanitize

// Text helpers every output shares: cutting a string to a bound, keeping
// it on one line, and the lines of a stderr tail. They cut only between
// runes, so a cut string is as valid UTF-8 as the string it came from,
// and a cut is marked with "…". They keep what a server sent as it is:
// Text escapes it for a terminal.

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where a string was cut.
const Ellipsis = "…"

// Truncate returns s when it is at most n bytes long, else its longest
// start of at most n bytes that ends between two runes, followed by "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, max(n, 0))] + Ellipsis
}

// TruncateStart is Truncate from the other end: s when it is at most n
// bytes long, else "…" followed by its longest end of at most n bytes that
// starts at a rune. It keeps the end of a log, where the error is.
func TruncateStart(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return Ellipsis + s[i:]
}

// runeStart is the largest i <= n (< len(s)) at which a rune of s
// starts. Where no rune starts within utf8.UTFMax bytes, s is not UTF-8
// there, and n is as good a place as any.
func runeStart(s string, n int) int {
	for i := n; i >= 0 && n-i < utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// OneLine returns s with every run of white space, line breaks included,
// turned into one space, and none at either end: an error message fit for
// one log line, CI annotation or table cell.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Line is the one way a text is cut to one line for a message, a quote, a
// comment or a table cell: OneLine, then Truncate to n bytes (a cut ends
// between runes and is marked "…"). Whatever s holds, the result is at
// most n bytes and the ellipsis: 300 bytes that are not UTF-8, cut to
// 200, are 200 of them and "…".
func Line(s string, n int) string { return Truncate(OneLine(s), n) }

// LastLines returns the last n lines of a stderr tail (every line when n
// is 0 or less), without the blank lines and white space at its end and
// without each line's "\r". Nil for a tail with nothing in it.
func LastLines(tail string, n int) []string {
	tail = strings.TrimRight(tail, " \t\r\n")
	if tail == "" {
		return nil
	}
	lines := strings.Split(tail, "\n")
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// LastLine is the last line of a stderr tail that is not blank, "" for
// none.
func LastLine(tail string) string {
	if lines := LastLines(tail, 1); len(lines) > 0 {
		return lines[0]
	}
	return ""
}

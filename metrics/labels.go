package metrics

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Byte limits for label values a server controls. A hostile or broken server
// must not be able to grow a series beyond these, whatever it reports: a
// label keeps at most this many bytes of the server's, then "…"; each of
// those bytes that is not UTF-8 shows as U+FFFD (3 bytes), so a value is
// at most 3*limit+3 bytes. The cut comes first so a name reads the same in
// a label as on the pages, which cut the server's bytes too.
const (
	maxInfoLabelBytes = 64 // server_name, server_version, protocol_version
	// maxToolLabelBytes is how much of a tool name a label keeps: what the
	// pages and the logs show of one (sanitize.Name), so that a name cut
	// reads the same on a dashboard as on the status page.
	maxToolLabelBytes    = sanitize.MaxNameBytes
	maxMessageLabelBytes = 200 // a server's words quoted in an alert's summary
)

// labelValue makes s safe as a label value: at most max bytes of it, cut
// as every output cuts (sanitize.Truncate: between runes, marked "…"),
// then valid UTF-8 (the client library refuses anything else, and a
// refused series would fail the whole scrape) with no control characters,
// each of those replaced by U+FFFD. max <= 0 means no length limit, for
// values mcpwatch controls (config keys, locked tool names).
func labelValue(s string, max int) string {
	if max > 0 {
		s = sanitize.Truncate(s, max)
	}
	if cleanString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError
	}
	return b.String()
}

// cleanString reports whether s is valid UTF-8 without control characters:
// the common case, which labelValue returns without copying.
func cleanString(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

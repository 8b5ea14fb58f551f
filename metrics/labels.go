package metrics

import (
	"unicode"
	"unicode/utf8"
)

// Byte limits for label values a server controls. A hostile or broken server
// must not be able to grow a series beyond these, whatever it reports.
const (
	maxInfoLabelBytes    = 64  // server_name, server_version, protocol_version
	maxToolLabelBytes    = 128 // names of forbidden tools the server listed
	maxMessageLabelBytes = 200 // a server's words quoted in an alert's summary
)

// ellipsis marks a cut value, so nobody reads it as the whole of it.
const ellipsis = "…"

// labelValue makes s safe as a label value: valid UTF-8 (the client library
// refuses anything else, and a refused series would fail the whole scrape),
// with no control characters, and at most max bytes, cut at a character
// boundary and marked with an ellipsis. max <= 0 means no length limit, for
// values mcpwatch controls (config keys, locked tool names).
func labelValue(s string, max int) string {
	if (max <= 0 || len(s) <= max) && cleanString(s) {
		return s
	}
	limit := max
	if limit <= 0 {
		limit = len(s) * utf8.UTFMax // replacements may grow the value
	}
	out := make([]byte, 0, min(len(s), limit))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		if len(out)+utf8.RuneLen(r) > limit {
			// Take back whole characters until the marker fits.
			for len(out)+len(ellipsis) > limit && len(out) > 0 {
				_, n := utf8.DecodeLastRune(out)
				out = out[:len(out)-n]
			}
			if len(out)+len(ellipsis) <= limit {
				out = append(out, ellipsis...)
			}
			break
		}
		out = utf8.AppendRune(out, r)
		i += size
	}
	return string(out)
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

package sanitize

import (
	"fmt"
	"strings"
)

// A name a server chose (a tool's) is as long as it likes: one of 3 MB
// made a 3 MB status page row, a 12 MB server page, a 3 MB log line and a
// 6 MB GitHub step summary (which GitHub refuses over 1 MiB). Every output
// for people shows at most MaxNameBytes of one; lists that stand in one
// line or cell show at most MaxNames of them. Outputs for programs (the
// JSON API and reports, the lock) keep names whole, since a cut name could
// equal another: the probe's cap on the bytes of one tools/list bounds
// them there.
const (
	// MaxNameBytes is how much of a name people are shown. The protocol
	// asks for tool names of 1 to 128 characters.
	MaxNameBytes = 128
	// MaxNames is how many names a one-line list shows before "… and N
	// more".
	MaxNames = 20
)

// Name is s cut to MaxNameBytes, and marked "…" when cut. It escapes
// nothing: Text does that for text outputs, templates for HTML.
func Name(s string) string { return Truncate(s, MaxNameBytes) }

// JoinNames is names for one line: each cut by Name, joined by sep, and
// after max of them (all of them when max <= 0) "… and N more". Like Name
// it escapes nothing.
func JoinNames(names []string, sep string, max int) string {
	shown := names
	if max > 0 && len(names) > max {
		shown = names[:max]
	}
	var b strings.Builder
	for i, n := range shown {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(Name(n))
	}
	if more := len(names) - len(shown); more > 0 {
		fmt.Fprintf(&b, "%s%s and %d more", sep, Ellipsis, more)
	}
	return b.String()
}

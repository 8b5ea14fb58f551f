package sanitize

import "strings"

// ShellQuote is the one quoting of the words of a command mcpwatch
// suggests ("run 'mcpwatch lock --server NAME'") or prints to paste back
// (config check's command line): POSIX single quotes, which a shell takes
// literally whatever they hold ($, backquotes, backslashes, !, spaces); a
// single quote inside ends the quoting, is escaped with a backslash, and
// starts it again. A word of only letters, digits and @%+=:,./_- is left
// as it is, and the empty word is two single quotes. Go's strconv.Quote is
// not this: "$HOME" in double quotes is still expanded by the shell.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("@%+=:,./_-", c) >= 0) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"fetch_daily_report", "fetch_daily_report"},
		{"", ""},
		{"x\n::error::injected", `x\n::error::injected`},
		{"::error::injected", `\x3a:error::injected`},
		{"  ::stop-commands::tok", `  \x3a:stop-commands::tok`},
		{"##vso[task.setvariable]x", `\x23#vso[task.setvariable]x`},
		{"a::b and ## c", "a::b and ## c"}, // not at the start of a line: nothing to act on
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\a`},
		{"tab\there\r\n", `tab\there\r\n`},
		{"del\x7f c1\u009b sep\u2028 rlo\u202e fsi\u2068", `del\x7f c1\u009b sep\u2028 rlo\u202e fsi\u2068`},
		{"bad \xff utf-8", `bad \xff utf-8`},
		{"héllo, 世界 ✅", "héllo, 世界 ✅"},
		{`back\slash %0A`, `back\slash %0A`},
	}
	for _, tc := range cases {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzText: the output is valid UTF-8, on one line, with no control or
// bidirectional character, and never begins a workflow command.
func FuzzText(f *testing.F) {
	for _, s := range []string{"x\n::error::y", "\x1b[31mred", "::warning::", "  ##[group]", "\u202e", "\xff\xfe", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if unsafe(r) {
				t.Fatalf("Text(%q) = %q holds %U", s, out, r)
			}
		}
		trimmed := strings.TrimLeft(out, " ")
		if strings.HasPrefix(trimmed, "::") || strings.HasPrefix(trimmed, "##") {
			t.Fatalf("Text(%q) = %q begins a workflow command", s, out)
		}
	})
}

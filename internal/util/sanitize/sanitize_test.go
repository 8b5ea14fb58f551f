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

// Layout escapes as Text does, but keeps line breaks and tabs, and a
// workflow command (a page runs none).
func TestLayout(t *testing.T) {
	cases := []struct{ in, want string }{
		{"<pre>a\n\tb</pre>", "<pre>a\n\tb</pre>"},
		{"", ""},
		{"::error::x\n##[group]", "::error::x\n##[group]"},
		{"read_\u202egnp.exe", `read_\u202egnp.exe`},
		{"c1\u0085\u009b31m del\x7f esc\x1b cr\r sep\u2028 lrm\u200e", `c1\u0085\u009b31m del\x7f esc\x1b cr\r sep\u2028 lrm\u200e`},
		{"héllo\n世界 ✅", "héllo\n世界 ✅"},
		{"bad \xff\n", "bad \\xff\n"},
	}
	for _, tc := range cases {
		if got := Layout(tc.in); got != tc.want {
			t.Errorf("Layout(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzText: the output is valid UTF-8, on one line, with no control or
// bidirectional character, and never begins a workflow command; Layout's
// the same with its line breaks and tabs.
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
		// Layout: the same, but its line breaks and tabs kept.
		laid := Layout(s)
		if !utf8.ValidString(laid) || strings.Count(laid, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Layout(%q) = %q: not UTF-8, or its lines changed", s, laid)
		}
		for _, r := range laid {
			if unsafeLaid(r) {
				t.Fatalf("Layout(%q) = %q holds %U", s, laid, r)
			}
		}
	})
}

package preflight

import (
	"html"
	"strings"
	"testing"
)

// FuzzMarkdownText: whatever a server names a tool, the summary shows that
// text (its character references decode back to it, carriage returns
// aside) and holds no character that opens Markdown or HTML, but an
// underscore between two letters or digits, which cannot, and nothing
// GitHub would make a link of by itself (a URL's "://", an address's "@",
// "www.").
func FuzzMarkdownText(f *testing.F) {
	for _, seed := range []string{"fetch_daily_report", "[x](https://evil.example)", "![img](https://evil.example/p.png)",
		"**b** _i_ ~~s~~", "<img src=x>", "`c` \\[e\\] a|b", "_lead", "trail_", "é_é", "&amp; &#91;", "\r\n",
		"https://evil.example/login", "www.evil.example", "WWW.evil.example", "admin@evil.example", "mailto:a@b.example"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := markdownText(s)
		if got, want := html.UnescapeString(out), strings.ReplaceAll(s, "\r", ""); got != want {
			t.Fatalf("markdownText(%q) = %q, which shows %q", s, out, got)
		}
		if l := strings.ToLower(out); strings.Contains(l, "www.") || strings.Contains(l, "://") {
			t.Fatalf("markdownText(%q) = %q holds www. or ://, which GitHub links", s, out)
		}
		for i := 0; i < len(out); i++ {
			c := out[i]
			switch {
			case strings.IndexByte("[]*~`\\|<>\"'@", c) >= 0:
				t.Fatalf("markdownText(%q) = %q holds %q", s, out, c)
			case c == '_' && (i == 0 || i+1 == len(out) || !isAlnum(out[i-1]) || !isAlnum(out[i+1])):
				t.Fatalf("markdownText(%q) = %q holds an underscore that may start emphasis", s, out)
			}
		}
	})
}

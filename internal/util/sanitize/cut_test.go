package sanitize

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: the cut goes before it, not through it
		{"héllo", 3, "hé…"},
		{"世界", 4, "世…"},
		{"世界", 2, "…"},
		{"abc", 0, "…"},
		{"\xff\xfe\xfd\xfc\xfb", 2, "\xff\xfe…"}, // not UTF-8: cut where asked
	}
	for _, tc := range cases {
		if got := Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := TruncateStart("tail of a log: 世界", 7); got != "… 世界" {
		t.Errorf("TruncateStart = %q", got)
	}
	if got := TruncateStart("世界", 5); got != "…界" {
		t.Errorf("TruncateStart(世界, 5) = %q", got)
	}
}

// No helper cuts a rune in half: every cut of a valid string, at every
// bound, is valid UTF-8 within the bound (and the ellipsis).
func TestNoHelperCutsARune(t *testing.T) {
	s := "aé世🙂z\u202e"
	for n := 0; n <= len(s)+1; n++ {
		for name, got := range map[string]string{"Truncate": Truncate(s, n), "TruncateStart": TruncateStart(s, n)} {
			if !utf8.ValidString(got) {
				t.Errorf("%s(%q, %d) = %q: not UTF-8", name, s, n, got)
			}
			if len(strings.TrimPrefix(strings.TrimSuffix(got, Ellipsis), Ellipsis)) > n {
				t.Errorf("%s(%q, %d) = %q: longer than %d bytes", name, s, n, got, n)
			}
		}
	}
}

func FuzzTruncate(f *testing.F) {
	for _, s := range []string{"héllo", "世界🙂", "\xff\xfe", "ok"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		for _, got := range []string{Truncate(s, n), TruncateStart(s, n)} {
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("cut %q at %d into %q: not UTF-8", s, n, got)
			}
			if len(got) > max(n, len(s)) && len(got) > n+len(Ellipsis) {
				t.Fatalf("cut %q at %d into %q: too long", s, n, got)
			}
		}
	})
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  read failed:\n\tconnection  reset\r\n"); got != "read failed: connection reset" {
		t.Errorf("OneLine = %q", got)
	}
}

func TestLastLines(t *testing.T) {
	tail := "starting\r\nloading config\n\nerror: bad token\r\n  \n"
	if got := LastLines(tail, 2); !slices.Equal(got, []string{"", "error: bad token"}) {
		t.Errorf("LastLines(2) = %q", got)
	}
	if got := LastLines(tail, 0); !slices.Equal(got, []string{"starting", "loading config", "", "error: bad token"}) {
		t.Errorf("LastLines(0) = %q", got)
	}
	if got := LastLines(" \n\r\n", 5); got != nil {
		t.Errorf("LastLines of blanks = %q", got)
	}
	if got := LastLine(tail); got != "error: bad token" {
		t.Errorf("LastLine = %q", got)
	}
	if got := LastLine(""); got != "" {
		t.Errorf("LastLine of nothing = %q", got)
	}
}

// Line is the one cut to one line: the canary's comments, the daemon's
// header errors and the credential quote agreed on no answer for bytes
// that are not UTF-8 (300 of them became 9 bytes one way and 203 the
// other), nor on the mark ("..." or "…").
func TestLine(t *testing.T) {
	for _, b := range []byte{0x80, 0xff, 'a'} {
		s := strings.Repeat(string([]byte{b}), 300)
		if got := Line(s, 200); len(got) != 200+len(Ellipsis) || !strings.HasSuffix(got, Ellipsis) {
			t.Errorf("Line(300 × %#x, 200) is %d bytes, want 200 and the ellipsis", b, len(got))
		}
	}
	if got := Line("a\n  b\tc  ", 10); got != "a b c" {
		t.Errorf("Line on one line = %q", got)
	}
	if got := Line("héllo wörld", 2); got != "h…" {
		t.Errorf("Line cut inside a rune = %q", got)
	}
}

package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	if got := Name("fetch_daily_report"); got != "fetch_daily_report" {
		t.Errorf("a short name changed: %q", got)
	}
	long := strings.Repeat("é", 3<<20)
	got := Name(long)
	if len(got) > MaxNameBytes+len(Ellipsis) || !strings.HasSuffix(got, Ellipsis) || !utf8.ValidString(got) {
		t.Errorf("Name of 3 MB: %d bytes, %q", len(got), got[max(0, len(got)-10):])
	}
}

func TestJoinNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		max   int
		want  string
	}{
		{nil, 3, ""},
		{[]string{"a", "b"}, 3, "a, b"},
		{[]string{"a", "b", "c", "d", "e"}, 3, "a, b, c, … and 2 more"},
		{[]string{"a", "b", "c", "d", "e"}, 0, "a, b, c, d, e"},
		{[]string{strings.Repeat("n", 200)}, 3, strings.Repeat("n", MaxNameBytes) + "…"},
	} {
		if got := JoinNames(tc.names, ", ", tc.max); got != tc.want {
			t.Errorf("JoinNames(%d names, %d) = %q, want %q", len(tc.names), tc.max, got, tc.want)
		}
	}
}

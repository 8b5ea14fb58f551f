package runner

import (
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
)

// One pass over the text finds what a search per needle finds.
func TestNeedlesAsStringsContains(t *testing.T) {
	cases := []struct {
		needles []string
		text    string
		want    bool
	}{
		{[]string{"abcd"}, "abcd", true},
		{[]string{"abcd"}, "xabc", false},
		{[]string{"abcd"}, "xxabcd", true}, // at the very end
		{[]string{"abcdef"}, "abcde", false},
		{[]string{"abcdef", "abcdxy"}, "..abcdxy..", true}, // two needles, one start
		{[]string{"ab"}, "xaby", true},                     // shorter than a window
		{[]string{"ab"}, "a", false},
		{[]string{"abcd"}, "", false},
		{nil, "anything", false},
	}
	for _, tc := range cases {
		if got := newNeedles(tc.needles).in(tc.text); got != tc.want {
			t.Errorf("needles %q in %q = %v, want %v", tc.needles, tc.text, got, tc.want)
		}
	}
	// Random needles and texts over a small alphabet, so that they meet.
	property := func(seed int64) bool {
		r := rand.New(rand.NewSource(seed)) //nolint:gosec // G404: seeded by quick, so a failure repeats
		word := func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = "ab\x00\xff"[r.Intn(4)]
			}
			return string(b)
		}
		var list []string
		for range 1 + r.Intn(4) {
			list = append(list, word(1+r.Intn(7)))
		}
		text := word(r.Intn(40))
		want := false
		for _, n := range list {
			want = want || strings.Contains(text, n)
		}
		if got := newNeedles(list).in(text); got != want {
			t.Errorf("needles %q in %q = %v, want %v", list, text, got, want)
			return false
		}
		return true
	}
	if err := quick.Check(property, &quick.Config{MaxCount: 5000, Rand: rand.New(rand.NewSource(3))}); err != nil { //nolint:gosec // G404: seeded, the same cases every run
		t.Error(err)
	}
}

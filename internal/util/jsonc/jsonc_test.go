package jsonc

import (
	"strings"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a": "http://x//y", "b": "/* not a comment */"}`, `{"a": "http://x//y", "b": "/* not a comment */"}`},
		{"{\"a\": 1, // comment\n}", "{\"a\": 1" + strings.Repeat(" ", len(", // comment")) + "\n}"},
		{`{"a": [1, 2,], /* c */ "b": "x\"//",}`, `{"a": [1, 2 ],         "b": "x\"//" }`},
		{"{\"a\": 1, /* c */ }", "{\"a\": 1" + strings.Repeat(" ", len(", /* c */ ")) + "}"},
	}
	for _, tc := range cases {
		clean, _ := strip([]byte(tc.in))
		got := string(clean)
		if got != tc.want {
			t.Errorf("Strip(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
		}
		if len(got) != len(tc.in) {
			t.Errorf("length changed: offsets in errors would be wrong")
		}
	}
}

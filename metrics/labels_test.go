package metrics

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

func TestLabelValue(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"clean value unchanged", "github-mcp-server", 64, "github-mcp-server"},
		{"exactly the limit", strings.Repeat("a", 64), 64, strings.Repeat("a", 64)},
		{"invalid UTF-8 replaced", "v\xff1", 64, "v\uFFFD1"},
		{"control characters replaced", "a\nb\x00c\x1b", 64, "a\uFFFDb\uFFFDc\uFFFD"},
		{"cut and marked", strings.Repeat("a", 100), 10, "aaaaaaaaaa…"},
		{"cut at a character boundary", strings.Repeat("é", 10), 9, "éééé…"},
		{"no limit for values mcpwatch owns", strings.Repeat("a", 300), 0, strings.Repeat("a", 300)},
		{"no limit still cleans", "x\xffy", 0, "x\uFFFDy"},
		{"cut, then cleaned", "a\nb\xffcdef", 4, "a\uFFFDb\uFFFD…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := labelValue(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("labelValue(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result %q is not valid UTF-8", got)
			}
		})
	}
}

// A tool name a server chose is cut once, the same way for a metric label
// as for the pages and the logs (sanitize.Name): the same bytes kept, the
// same marker. The label is that cut, with what is not valid UTF-8 or is a
// control character replaced, so the client library never refuses it.
func TestToolLabelIsTheNameCutForPeople(t *testing.T) {
	for name, in := range map[string]string{
		"200 bytes":                  strings.Repeat("t", 200),
		"cut inside a character":     strings.Repeat("t", 127) + strings.Repeat("é", 40),
		"exactly the limit":          strings.Repeat("t", sanitize.MaxNameBytes),
		"invalid UTF-8 past the cut": strings.Repeat("t", 150) + "\xff",
	} {
		t.Run(name, func(t *testing.T) {
			got, want := labelValue(in, maxToolLabelBytes), sanitize.Name(in)
			if got != want {
				t.Errorf("label of %d bytes %q, want the name as people are shown it, %d bytes %q", len(got), got, len(want), want)
			}
		})
	}
	in := "bad\xffname" + strings.Repeat("x", 300)
	got := labelValue(in, maxToolLabelBytes)
	if want := strings.ToValidUTF8(sanitize.Name(in), "\uFFFD"); got != want || !utf8.ValidString(got) {
		t.Errorf("label %q, want %q: the cut of the name, made valid UTF-8", got, want)
	}
}

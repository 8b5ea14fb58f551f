package metrics

import (
	"strings"
	"testing"
	"unicode/utf8"
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
		{"cut and marked", strings.Repeat("a", 100), 10, "aaaaaaa…"},
		{"cut at a character boundary", strings.Repeat("é", 10), 9, "ééé…"},
		{"no limit for values mcpwatch owns", strings.Repeat("a", 300), 0, strings.Repeat("a", 300)},
		{"no limit still cleans", "x\xffy", 0, "x\uFFFDy"},
		{"limit smaller than the marker", "abcdef", 2, ""},
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

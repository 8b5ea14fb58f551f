package secret

import "testing"

func TestURLHasPassword(t *testing.T) {
	for raw, want := range map[string]bool{
		"postgresql://mcp:pw@127.0.0.1:5432/app": true,
		"postgresql://mcp@127.0.0.1/app":         false,
		"postgresql://mcp:@127.0.0.1/app":        false,
		"https://example.com/mcp":                false,
		"/srv/data":                              false,
		"%zz":                                    false,
	} {
		if got := URLHasPassword(raw); got != want {
			t.Errorf("URLHasPassword(%q) = %v", raw, got)
		}
	}
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A YAML syntax error names the line of the problem, not the line where
// the block around it began, as yaml.v3 alone does.
func TestYAMLErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, yml, want string
	}{
		{"a key indented one space too far", "defaults:\n  schedule: \"@every 1m\"\n   timeout: 5s\nservers:\n  a:\n    command: x\n",
			"not valid YAML: yaml: line 3: did not find expected key"},
		{"under a server", "servers:\n  report:\n    command: x\n   args: [a]\n",
			"not valid YAML: yaml: line 4: did not find expected key"},
		{"an unclosed quote", "servers:\n  report:\n    command: \"x\n",
			"not valid YAML: yaml: line 3: "},
	} {
		path := filepath.Join(t.TempDir(), "mcpwatch.yml")
		if err := os.WriteFile(path, []byte(tc.yml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}

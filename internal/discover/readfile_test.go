package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Discovery and an import of the file stop at one size (MaxFileBytes): a
// .mcp.json past it is an error both ways, not read whole by one of them.
func TestOneSizeLimit(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "app")
	big := `{"mcpServers": {"a": {"command": "x"}}, "pad": "` + strings.Repeat("x", MaxFileBytes) + `"}`
	writeFiles(t, home, map[string]string{"app/.mcp.json": big})
	res := Find(Host{OS: "linux", Home: home, Projects: []string{project}})
	if err := res.Err(); err == nil || len(res.Servers) != 0 {
		t.Errorf("discover read a %d-byte file: %v, %d servers", len(big), err, len(res.Servers))
	}
	if _, err := ReadFile(filepath.Join(project, ".mcp.json"), ""); err == nil {
		t.Errorf("ReadFile read a %d-byte file", len(big))
	}
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadFile(filepath.Join(project, ".mcp.json"), ""); err != nil || len(p.Origins) != 1 || p.Client != ClaudeCode {
		t.Errorf("a small .mcp.json: %+v, %v", p, err)
	}
}

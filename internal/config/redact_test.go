package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedactedServersCarryNoSecret prints every fixture server as JSON
// and looks for each literal secret the fixtures hold.
func TestRedactedServersCarryNoSecret(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
imports: [`+filepath.Join(mustAbs(t, "testdata/clients"), "desktop/claude_desktop_config.json")+`]
servers:
  literal:
    command: ./server
    args: [--api-key, hunter2-arg]
    env: {REPORT_API_TOKEN: hunter2-env, FROM_FILE: "${file:./secrets/token}"}
  remote:
    url: https://bob:hunter2-pw@mcp.example.com/mcp?key=hunter2-query
    headers: {Authorization: Bearer hunter2-header, X-Ref: "Bearer ${TOKEN}", X-Default: "${K:-hunter2-default}"}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, s := range cfg.Servers {
		b, err := json.Marshal(s.Redacted())
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	printed := out.String()
	for _, secret := range []string{"hunter2", "ghp_desktopLiteralSecret"} {
		if strings.Contains(printed, secret) {
			t.Errorf("printed servers carry %q:\n%s", secret, printed)
		}
	}
	for _, shown := range []string{`"Bearer ${TOKEN}"`, `"${file:./secrets/token}"`, `"${K:-\u003credacted\u003e}"`, `"GITHUB_PERSONAL_ACCESS_TOKEN":"\u003credacted\u003e"`} {
		if !strings.Contains(printed, shown) {
			t.Errorf("printed servers lack %s:\n%s", shown, printed)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

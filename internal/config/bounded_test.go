package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// within runs f, failing the test if it has not returned after a minute:
// the guard of a read that would block for ever, not a timing claim.
// A ${file:...} naming a named pipe, or a device, is a secret file that
// cannot be read; it never blocks the probe or `config check` (it did, for
// ever: the open of a pipe waits for a writer).
// References nest at most maxNesting deep: 400,000 nested defaults crashed
// the parser (and a running daemon on its reload) with a stack overflow.
func TestDeeplyNestedReferencesAreRefused(t *testing.T) {
	const n = 400_000
	deep := strings.Repeat("${A:-", n) + "x" + strings.Repeat("}", n)
	if _, err := expand.Expand(deep, mapLookup(nil)); err == nil || !strings.Contains(err.Error(), "references nest more than 16 deep") {
		t.Errorf("Expand: %v", err)
	}
	dir := t.TempDir()
	nested := strings.Repeat("${A:-", 1000) + "x" + strings.Repeat("}", 1000)
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), "servers:\n  report:\n    command: /bin/true\n    env: {TOKEN: \""+nested+"\"}\n")
	_, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err == nil || !strings.Contains(err.Error(), "servers.report.env.TOKEN: bad reference at byte 80: references nest more than 16 deep") {
		t.Errorf("Load: %v", err)
	}
	ok := strings.Repeat("${A:-", 16) + "x" + strings.Repeat("}", 16)
	if got, err := expand.Expand(ok, mapLookup(nil)); err != nil || got != "x" {
		t.Errorf("16 deep: %q, %v", got, err)
	}
}

// Every file the configuration names is read bounded: no device, no pipe,
// and no more than its limit, the error naming the file and the limit.
// toolsFile: /dev/zero was read until the memory ran out.
func TestFilesTheConfigurationNamesAreBounded(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	writeFile(t, huge, "")
	if err := os.Truncate(huge, 8<<20+1); err != nil {
		t.Fatal(err)
	}
	probeConfig := filepath.Join(dir, "mcp-probe.config.json")
	writeFile(t, probeConfig, `{"servers": [{"name": "zero", "target": "https://mcp.example.com/mcp", "toolsFile": "/dev/zero"},
		{"name": "huge", "target": "https://mcp.example.com/mcp", "toolsFile": "huge.json"}]}`)
	cases := []struct{ name, yml, want string }{
		{"mcp-probe toolsFile", "imports: [mcp-probe.config.json]\n",
			probeConfig + ": servers.zero.toolsFile: /dev/zero: cannot read it (a device, not a regular file); fix the path\n" +
				probeConfig + ": servers.huge.toolsFile: " + huge + ": cannot read it (larger than the limit of 8 MiB); fix the path"},
		{"contracts", "servers:\n  report: {command: /bin/true, contracts: /dev/zero}\n",
			"servers.report.contracts: /dev/zero: cannot read it (a device, not a regular file); fix the path"},
		{"an import", "imports: [huge.json]\n",
			"imports[0]: cannot read " + huge + " (larger than the limit of 8 MiB); fix the path, or write {path: ..., optional: true} if it may be absent"},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, "mcpwatch.yml")
		writeFile(t, path, tc.yml)
		got := testtool.Within(t, "Load", func() error { _, err := load(path); return err })
		if got == nil || !strings.Contains(got.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, got, tc.want)
		}
	}

	_, err := load(huge)
	if want := "read config: read " + huge + ": larger than the limit of 8 MiB"; err == nil || err.Error() != want {
		t.Errorf("the configuration itself: %v, want %s", err, want)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
)

// Every JSON document mcpwatch writes has one shape (see jsondoc):
// schema_version first, measured durations as seconds in *_seconds
// members, configured ones as strings like "10s". Each document here is
// one a user's script reads.
func TestEveryJSONDocumentHasOneShape(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REPORT_API_TOKEN": "calls-secret-token-1"}
	dir := callsDir(t, []string{"--behavior", "healthy"}, twoContracts)
	docs := map[string]string{}
	run := func(name string, args ...string) {
		r := runBin(t, dir, env, args...)
		if r.code != exitOK && r.code != exitFailed {
			t.Errorf("%s: %s", name, r)
		}
		docs[name] = r.stdout
	}
	run("check --format json", "check", "--format", "json", "--receipt", "receipt.json")
	receipt, err := os.ReadFile(filepath.Join(dir, "receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs["the receipt"] = string(receipt)
	run("lock --format json", "lock", "--format", "json", "--lock.file", "relocked.json")
	run("config check --format json", "config", "check", "--format", "json")
	run("probe --format json", "probe", "--format", "json", "--env", "REPORT_API_TOKEN=calls-secret-token-1", "--", testserverBin(t), "--behavior", "healthy")
	run("probe --call --format json", "probe", "--format", "json", "--call", "list_report_dates",
		"--env", "REPORT_API_TOKEN=calls-secret-token-1", "--", testserverBin(t), "--behavior", "healthy")
	run("discover --format json", "discover", "--format", "json")

	file := filepath.Join(t.TempDir(), "mcpwatch.yml")
	writeTestFile(t, file, "servers:\n  x:\n    url: http://127.0.0.1:1/mcp\n")
	base := serveInProcess(t, nil, "-c", file)
	firstProbe(t, base, "x")
	for _, path := range []string{"/api/v1/servers", "/api/v1/servers/x", "/api/v1/servers/absent"} {
		docs["GET "+path] = scrape(t, base+path)
	}

	for name, doc := range docs {
		if err := jsondoc.Check([]byte(doc)); err != nil {
			t.Errorf("%s: %v\n%s", name, err, doc)
		}
	}
}

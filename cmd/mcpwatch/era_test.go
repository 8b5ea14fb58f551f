package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check and lock remember each server's era in a cache beside the lock; a
// wrong entry is detected afresh in the same run, and --era overrides.
func TestCheckRemembersEra(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"srv": map[string]any{"command": testserverBin(t)},
	}))
	writeJSON(t, dir, "mcp-tools.lock.json", map[string][]string{"srv": {"fetch_daily_report", "list_report_dates"}})
	cache := filepath.Join(dir, ".mcp-tools.lock.json.era")

	if r := runBin(t, dir, nil, "check"); r.code != exitOK {
		t.Fatalf("first check: %s", r)
	}
	learnt := string(readFile(t, cache))
	if !strings.Contains(learnt, `"era": "legacy"`) || !strings.Contains(learnt, `"kind": "mcpwatch-era-cache"`) {
		t.Fatalf("the cache after the first check:\n%s", learnt)
	}
	if lock := string(readFile(t, filepath.Join(dir, "mcp-tools.lock.json"))); strings.Contains(lock, "era") {
		t.Errorf("the lock carries the era:\n%s", lock)
	}

	// A hint that is wrong costs a warning, never a failure.
	if err := os.WriteFile(cache, []byte(strings.Replace(learnt, `"era": "legacy"`, `"era": "modern"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, nil, "check", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("check with a wrong hint: %s", r)
	}
	assertContains(t, "check with a wrong hint", r.stdout, "no longer speaks the modern era")
	if got := string(readFile(t, cache)); got != learnt {
		t.Errorf("the cache after the wrong hint:\n%s", got)
	}

	// --era decides, and the cache gives no hint then.
	if err := os.WriteFile(cache, []byte(strings.Replace(learnt, `"era": "legacy"`, `"era": "modern"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, nil, "check", "--era", "legacy", "--format", "json"); r.code != exitOK || strings.Contains(r.stdout, "no longer speaks") {
		t.Fatalf("check --era legacy: %s", r)
	}
	if r := runBin(t, dir, nil, "lock", "--era", "auto"); r.code != exitOK {
		t.Fatalf("lock --era auto: %s", r)
	}
	if got := string(readFile(t, cache)); got != learnt {
		t.Errorf("the cache after lock --era auto:\n%s", got)
	}
	for _, cmd := range []string{"check", "lock", "serve"} {
		if r := runBin(t, dir, nil, cmd, "--era", "2025-06-18"); r.code != exitUsage || !strings.Contains(r.stderr, "--era") {
			t.Errorf("%s --era 2025-06-18: %s", cmd, r)
		}
	}
}

// --inherit-env passes the environment on, as a script run from the same
// shell would: a credential exported in CI with no env block in .mcp.json.
func TestCheckInheritEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"gated": map[string]any{"command": testserverBin(t), "args": []string{"--behavior", "token-gated"}},
	}))
	writeJSON(t, dir, "mcp-tools.lock.json", map[string][]string{"gated": {"fetch_daily_report", "list_report_dates"}})
	env := map[string]string{"REPORT_API_TOKEN": "exported-in-ci"}
	r := runBin(t, dir, env, "check")
	if r.code != exitConfig {
		t.Fatalf("check with the minimal environment: %s", r)
	}
	assertContains(t, "check", r.stdout, "2/2 tools missing")
	if r := runBin(t, dir, env, "check", "--inherit-env"); r.code != exitOK {
		t.Fatalf("check --inherit-env: %s", r)
	}
	if strings.Contains(r.stdout+r.stderr, "exported-in-ci") {
		t.Errorf("the credential was printed: %s", r)
	}
}

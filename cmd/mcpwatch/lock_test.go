package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The acceptance run: a directory holding only a Claude Code .mcp.json.
func TestLockThenCheckInClaudeCodeDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": reportEntry(t)}))
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")
	token := map[string]string{"REPORT_API_TOKEN": "test-token"}

	r := runBin(t, dir, token, "lock")
	if r.code != exitOK {
		t.Fatalf("lock: want exit 0, got %s", r)
	}
	assertContains(t, "lock", r.stdout, "wrote "+lockPath+" (probed 1 server in ", "; the lock holds 2 tools of 1 server)\n",
		"  report: + fetch_daily_report, list_report_dates (new server)\n")
	locked := readFile(t, lockPath)
	if string(locked) != seedLockText+"\n" {
		t.Errorf("lock file:\n%s\nwant the Python preflight's format:\n%s", locked, seedLockText)
	}

	steps := []struct {
		name  string
		args  []string
		env   map[string]string
		code  int
		lines []string
	}{
		{"check", []string{"check"}, token, exitOK, []string{"MCP preflight OK in ", "(2 tools verified across 1 server)"}},
		{"check without the token", []string{"check"}, nil, exitConfig,
			[]string{"MCP preflight FAILED in ", "  - report: credential missing: env:REPORT_API_TOKEN has no value (${REPORT_API_TOKEN} is not set)", "2/2 locked tools unverified -> fetch_daily_report, list_report_dates"}},
		{"check with an empty token", []string{"check"}, map[string]string{"REPORT_API_TOKEN": ""}, exitConfig,
			[]string{"  - report: credential missing: env:REPORT_API_TOKEN has no value (${REPORT_API_TOKEN} is set but empty)", "2/2 locked tools unverified -> fetch_daily_report, list_report_dates"}},
		{"lock without the token", []string{"lock"}, nil, exitConfig,
			[]string{"refusing to write the lock: 1 of 1 server cannot be locked now\n", "  - report: credential missing: env:REPORT_API_TOKEN has no value (${REPORT_API_TOKEN} is not set)",
				lockPath + " left unchanged\n"}},
		{"lock with an empty token", []string{"lock"}, map[string]string{"REPORT_API_TOKEN": ""}, exitConfig,
			[]string{"  - report: credential missing: env:REPORT_API_TOKEN has no value (${REPORT_API_TOKEN} is set but empty)", " left unchanged\n"}},
		{"relock unchanged", []string{"lock"}, token, exitOK, []string{lockPath + ": no change (probed 1 server in "}},
	}
	for _, s := range steps {
		r := runBin(t, dir, s.env, s.args...)
		if r.code != s.code {
			t.Fatalf("%s: want exit %d, got %s", s.name, s.code, r)
		}
		assertContains(t, s.name, r.stdout, s.lines...)
		if got := readFile(t, lockPath); !bytes.Equal(got, locked) {
			t.Fatalf("%s changed the lock:\n%s", s.name, got)
		}
	}
}

// A lock with hand formatting that a failing relock must leave alone.
const handLock = "{\n  \"report\": [\"fetch_daily_report\", \"old_tool\"],\n  \"stalled\": [ \"list_report_dates\" ]\n}\n"

func failingDir(t *testing.T) string {
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"report":  reportEntry(t),
		"stalled": map[string]any{"command": testserverBin(t), "args": []string{"--behavior", "stall-tools-list"}},
		"ghost":   map[string]any{"command": "./no-such-binary"},
	}))
	if err := os.WriteFile(filepath.Join(dir, "mcp-tools.lock.json"), []byte(handLock), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLockRefusedWhileAServerFails(t *testing.T) {
	t.Parallel()
	dir := failingDir(t)
	r := runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "test-token"}, "lock", "--timeout", "2s")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "lock", r.stdout, "refusing to write the lock: 2 of 3 servers cannot be locked now\n",
		"  - ghost: probe failed (spawn_failed): ", "no-such-binary",
		"  - stalled: probe failed (timeout): ", "left unchanged\n")
	if got := string(readFile(t, filepath.Join(dir, "mcp-tools.lock.json"))); got != handLock {
		t.Errorf("the lock changed:\n%s", got)
	}
	// The era cache learnt the report server's era; nothing else is new.
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".mcp-tools.lock.json.era", ".mcp.json", "mcp-tools.lock.json"}; !slices.Equal(names, want) {
		t.Errorf("the directory holds %q, want %q (no temp file)", names, want)
	}
}

// --server relocks only the servers named: the failing ones are not even
// probed, and the others keep their bytes.
func TestLockSelectedServers(t *testing.T) {
	t.Parallel()
	dir := failingDir(t)
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")
	env := map[string]string{"REPORT_API_TOKEN": "test-token"}

	r := runBin(t, dir, env, "lock", "--server", "report")
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "lock", r.stdout, "wrote ", "  report: + list_report_dates; - old_tool\n")
	want := "{\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ],\n  \"stalled\": [ \"list_report_dates\" ]\n}\n"
	if got := string(readFile(t, lockPath)); got != want {
		t.Errorf("lock:\n%s\nwant:\n%s", got, want)
	}

	assertUsageErrors(t, dir, env, []usageCase{
		{[]string{"lock", "--server", "nope"}, `unknown server "nope"; the configuration (.mcp.json) defines: ghost, report, stalled`},
		{[]string{"lock", "--allow-empty=maybe"}, "invalid argument"},
	})
}

func TestLockAllowEmptyAndFingerprints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// ${VAR:-}: an empty token is meant, so the server is probed, and
	// lists no tools.
	entry := reportEntry(t)
	entry["env"] = map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN:-}"}
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": entry}))
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")

	r := runBin(t, dir, map[string]string{"REPORT_API_TOKEN": ""}, "lock")
	assertContains(t, "lock", r.stdout, "  - report: lists no tools (a missing or expired credential looks like this)", "--allow-empty", " left unchanged\n")
	r = runBin(t, dir, map[string]string{"REPORT_API_TOKEN": ""}, "lock", "--allow-empty")
	if r.code != exitOK || string(readFile(t, lockPath)) != "{\n  \"report\": []\n}\n" {
		t.Fatalf("--allow-empty: %s\nlock: %s", r, readFile(t, lockPath))
	}

	r = runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "test-token"}, "lock", "--fingerprints")
	if r.code != exitOK {
		t.Fatalf("--fingerprints: %s", r)
	}
	assertContains(t, "lock", string(readFile(t, lockPath)), `"fetch_daily_report": {"description": "sha256:`, `"schema": "sha256:`)
	if r := runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "test-token"}, "check", "--strict"); r.code != exitOK {
		t.Errorf("check --strict against a fingerprinted lock of the same surface: %s", r)
	}
}

// The Python preflight and mcpwatch share the lock both ways. The script
// probes its Python report server (it waits for the server to
// exit on "shutdown", which the Go report server does not); mcpwatch probes
// the Go report server, which offers the same tools under the same name.
func TestSeedScriptSharesTheLock(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python preflight cannot run")
	}
	seed, err := filepath.Abs("testdata/seed")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": reportEntry(t)}))
	writeJSON(t, dir, "seed.mcp.json", claudeCodeConfig(map[string]any{"report": map[string]any{
		"command": python, "args": []string{filepath.Join(seed, "report_server.py")},
		"env": map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"},
	}}))
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")
	token := map[string]string{"REPORT_API_TOKEN": "test-token"}
	runSeed := func(env map[string]string, args ...string) cliResult {
		cmd := exec.Command(python, append([]string{filepath.Join(seed, "preflight.py")}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "MCP_CONFIG=seed.mcp.json", "MCP_PROBE_TIMEOUT_S=10"}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		r := cliResult{stdout: string(out)}
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// The Python preflight writes; mcpwatch reads, and relocking rewrites it unchanged.
	if r := runSeed(token, "--update-lock"); r.code != 0 {
		t.Fatalf("seed --update-lock: %s", r)
	}
	seedLock := readFile(t, lockPath)
	if string(seedLock) != seedLockText {
		t.Errorf("the Python preflight wrote:\n%q\nwant:\n%q", seedLock, seedLockText)
	}
	if r := runBin(t, dir, token, "check"); r.code != exitOK {
		t.Errorf("check against the Python preflight's lock: %s", r)
	}
	if r := runBin(t, dir, token, "lock"); r.code != exitOK || !strings.Contains(r.stdout, ": no change") {
		t.Errorf("relock of the Python preflight's lock: %s", r)
	}
	if got := readFile(t, lockPath); !bytes.Equal(got, seedLock) {
		t.Errorf("relocking changed the Python preflight's lock:\n%q\nwant:\n%q", got, seedLock)
	}

	// mcpwatch writes, in both forms; the Python preflight reads.
	for _, args := range [][]string{{"lock"}, {"lock", "--fingerprints"}} {
		os.Remove(lockPath)
		if r := runBin(t, dir, token, args...); r.code != exitOK {
			t.Fatalf("%v: %s", args, r)
		}
		if r := runSeed(token); r.code != 0 || !strings.Contains(r.stdout, "MCP preflight OK") {
			t.Errorf("the Python preflight's check of a lock from mcpwatch %v: %s\nlock:\n%s", args, r, readFile(t, lockPath))
		}
		if r := runSeed(nil); r.code != 78 || !strings.Contains(r.stdout, "report: 2/2 tools missing") {
			t.Errorf("the Python preflight's check without the token, lock from mcpwatch %v: %s", args, r)
		}
	}
}

// A server only in the lock cannot be relocked by name: there is nothing
// to probe. Relocking every server drops it, and says so.
func TestLockServerOnlyInTheLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"report": reportEntry(t)}))
	writeJSON(t, dir, "mcp-tools.lock.json", map[string][]string{"report": {"fetch_daily_report", "list_report_dates"}, "gone": {"a_tool"}})
	env := map[string]string{"REPORT_API_TOKEN": "test-token"}

	r := runBin(t, dir, env, "lock", "--server", "gone")
	if r.code != exitUsage {
		t.Fatalf("want exit 2, got %s", r)
	}
	assertContains(t, "stderr", r.stderr, `server "gone" is in the lock but not in .mcp.json`, "run 'mcpwatch lock' without --server")

	r = runBin(t, dir, env, "lock")
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "stdout", r.stdout, "  gone: - a_tool (server no longer configured: dropped)\n")
	// The old lock ended without a newline, as the Python preflight writes it: so does the new one.
	if got := string(readFile(t, filepath.Join(dir, "mcp-tools.lock.json"))); got != seedLockText {
		t.Errorf("lock:\n%q", got)
	}
}

// A lock another writer changes while the probes run (a second 'mcpwatch
// lock --server', a checkout) is not overwritten: its change would be lost.
// Here the server itself rewrites the lock as it starts.
func TestLockChangedWhileProbing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	const theirs = "{\n  \"other\": [\"their_tool\"]\n}\n"
	script := "printf '%s' '" + theirs + "' > " + lock + "; exec " + reportserverBin(t)
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"report": map[string]any{"command": "/bin/sh", "args": []string{"-c", script},
			"env": map[string]string{"REPORT_API_TOKEN": "test-token"}},
	}))
	if err := os.WriteFile(lock, []byte(handLock), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, nil, "lock", "--server", "report")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "lock", r.stdout, "refusing to write the lock: "+lock+" changed while the servers were probed")
	if got := string(readFile(t, lock)); got != theirs {
		t.Errorf("the other writer's lock was overwritten:\n%s", got)
	}
}

// A tool name holding a configured secret is never locked: the lock is
// committed. The refusal names the server, and the lock is left alone.
func TestLockRefusesASecretInAToolName(t *testing.T) {
	t.Parallel()
	const token = "lock-secret-token-77aa"
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{"hostile": echoingServer(token, "API_TOKEN")}))
	lockPath := filepath.Join(dir, "mcp-tools.lock.json")
	r := runBin(t, dir, map[string]string{"API_TOKEN": token}, "lock")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "lock", r.stdout, "refusing to write the lock: 1 of 1 server cannot be locked now\n",
		"  - hostile: 1 tool name holds a configured secret value (leak_<redacted>)", lockPath+" left unchanged\n")
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Errorf("the output holds the token: %s", r)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Errorf("a lock was written: %v", err)
	}
}

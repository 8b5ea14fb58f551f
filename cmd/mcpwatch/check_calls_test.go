package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// callsDir is a directory with an mcpwatch.yml watching the test server
// (over stdio, with args), its lock, and the contracts given inline.
func callsDir(t *testing.T, args []string, calls string) string {
	t.Helper()
	dir := t.TempDir()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = `"` + a + `"`
	}
	yml := "servers:\n  report:\n    command: " + testserverBin(t) + "\n    args: [" + strings.Join(quoted, ", ") + "]\n" +
		"    env: {REPORT_API_TOKEN: \"${REPORT_API_TOKEN}\"}\n" + calls
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp-tools.lock.json"), []byte(seedLockText), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const twoContracts = `    calls:
      fetch_daily_report:
        input: {date: "2026-08-01"}
        expect: {status: pass, not_error_code: [401, 403], contains: orders}
      list_report_dates:
        expect: {contains: "2026-08-01"}
`

// A server that lists both tools and fails every call fails the
// preflight, naming the tool, the assertion and what came back; the same
// contracts against a healthy server pass.
func TestCheckCalls(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REPORT_API_TOKEN": "calls-secret-token-1"}
	cases := []struct {
		behavior string
		code     int
		lines    []string
	}{
		{"healthy", exitOK, []string{"MCP preflight OK in ", "(2 tools verified across 1 server; 2 of 2 calls passed)"}},
		// The kit's failing calls answer as a revoked token does: a
		// rejected credential, named, in the server's words.
		{"call-is-error", exitConfig, []string{"MCP preflight FAILED in ", "0 of 2 calls passed",
			"  - report: call fetch_daily_report failed (credential_rejected): credential env:REPORT_API_TOKEN rejected: upstream API error: 401 Unauthorized (the token was revoked)",
			"  - report: call list_report_dates failed (credential_rejected): credential env:REPORT_API_TOKEN rejected: upstream API error"}},
		{"call-rpc-error", exitConfig, []string{"  - report: call fetch_daily_report failed (credential_rejected): credential env:REPORT_API_TOKEN rejected: upstream API error: 401 Unauthorized (the token was revoked)"}},
		{"call-error-text", exitConfig, []string{`  - report: call fetch_daily_report failed (error_text): status: expected success, got a result that reports an error: {"error":"the report store is locked"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.behavior, func(t *testing.T) {
			t.Parallel()
			dir := callsDir(t, []string{"--behavior", tc.behavior}, twoContracts)
			r := runBin(t, dir, env, "check", "--receipt", "receipt.json", "--format", "junit", "--output", "report.xml")
			if r.code != tc.code {
				t.Fatalf("want exit %d, got %s", tc.code, r)
			}
			assertContains(t, "stdout", r.stdout, tc.lines...)

			// The receipt records every call: input, attempts, assertions.
			var receipt struct {
				Servers []struct {
					Calls []struct {
						Tool     string          `json:"tool"`
						Input    json.RawMessage `json:"input"`
						Passed   bool            `json:"passed"`
						Attempts []struct {
							Assertions []struct{ Name, Outcome string } `json:"assertions"`
						} `json:"attempts"`
					} `json:"calls"`
				} `json:"servers"`
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(dir, "receipt.json")), &receipt); err != nil {
				t.Fatal(err)
			}
			calls := receipt.Servers[0].Calls
			var input bytes.Buffer
			_ = json.Compact(&input, calls[0].Input)
			if len(calls) != 2 || calls[0].Tool != "fetch_daily_report" || input.String() != `{"date":"2026-08-01"}` ||
				len(calls[0].Attempts) != 1 || len(calls[0].Attempts[0].Assertions) != wantAssertions(tc.behavior) || calls[0].Passed != (tc.code == exitOK) {
				t.Errorf("receipt calls: %+v", calls)
			}
			// JUnit: the server's testcase and one per contract.
			var suites struct {
				Suites []struct {
					Cases []struct {
						Name    string    `xml:"name,attr"`
						Failure *struct{} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(readFile(t, filepath.Join(dir, "report.xml")), &suites); err != nil {
				t.Fatal(err)
			}
			cs := suites.Suites[0].Cases
			if len(cs) != 3 || cs[1].Name != "report call fetch_daily_report" || (cs[1].Failure != nil) != (tc.code != exitOK) {
				t.Errorf("junit cases: %+v", cs)
			}
			for _, out := range []string{r.stdout, r.stderr, string(readFile(t, filepath.Join(dir, "receipt.json")))} {
				if strings.Contains(out, env["REPORT_API_TOKEN"]) {
					t.Error("the token is in the output")
				}
			}
		})
	}
}

// A destructive tool is never called without the opt-in; a contract for a
// tool the server does not list fails; --fail-on-warn fails an uncovered
// locked tool.
func TestCheckCallsRefused(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REPORT_API_TOKEN": "t"}
	dir := callsDir(t, []string{"--tool", "delete_report:destructive", "--tool", "no_hints:none"}, `    calls:
      delete_report: {allowSideEffects: true, expect: {status: fail}}
      no_hints: {}
      gone_tool: {}
`)
	r := runBin(t, dir, env, "check")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "stdout", r.stdout,
		"  - report: call delete_report failed (refused): not called: tool delete_report is annotated destructiveHint: true; to call it on a schedule anyway, list it under allow_destructive_calls: of its server in mcpwatch.yml",
		"  - report: call gone_tool failed (not_listed): tool gone_tool is not listed by the server",
		// Both opt-ins it needs, in one message.
		"  - report: call no_hints failed (refused): not called: tool no_hints sends no annotations, so nothing says it only reads, and has no destructiveHint: false (a tool that is not read-only is destructive unless it says otherwise); mcpwatch calls only read-only tools: if calling it is harmless, it takes both opt-ins: \"allowSideEffects\": true in its contract, and its name under allow_destructive_calls: of its server in mcpwatch.yml (or remove the contract)")
}

// An mcp-probe config and its toolsFile, as mcp-probe's users have them:
// read unchanged; with --fail-on-warn an expected tool without a contract
// fails (mcp-probe's coverage rule).
func TestCheckMcpProbeConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeJSON(t, dir, "mcp-probe.config.json", map[string]any{"servers": []any{map[string]any{
		"name": "report", "target": testserverBin(t), "transport": "stdio",
		"expectedTools": []string{"fetch_daily_report", "list_report_dates"}, "toolsFile": "./report.tools.json",
	}}})
	writeJSON(t, dir, "report.tools.json", map[string]any{"tools": map[string]any{
		"list_report_dates": map[string]any{"input": map[string]any{}, "retry": map[string]any{"attempts": 2, "delayMs": 10, "retryOn": []any{503, "timeout"}},
			"expect": map[string]any{"status": "pass", "not_error_code": []int{401, 403}, "contains": "2026-08-01", "notContains": []string{"Traceback"}}},
	}})
	if err := os.WriteFile(filepath.Join(dir, "mcp-tools.lock.json"), []byte(seedLockText), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "t"}, "check", "--config.file", "mcp-probe.config.json")
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "stdout", r.stdout, "1 of 1 call passed", "info: report: 1 tool expected but without a contract in ", "report.tools.json -> fetch_daily_report")
	r = runBin(t, dir, map[string]string{"REPORT_API_TOKEN": "t"}, "check", "--config.file", "mcp-probe.config.json", "--fail-on-warn")
	if r.code != exitConfig {
		t.Fatalf("--fail-on-warn: want exit 78, got %s", r)
	}
	assertContains(t, "stdout", r.stdout, "  - report: 1 tool expected but without a contract in ")
}

// wantAssertions is how many assertions the first contract of twoContracts
// reports: its three, and the credential's first when the kit's answer is a
// rejected credential.
func wantAssertions(behavior string) int {
	if behavior == "call-is-error" || behavior == "call-rpc-error" {
		return 4
	}
	return 3
}

// Coverage follows mcp-probe's rule: without expectedTools, the contracted
// tools themselves. A locked tool needs no contract (the lock checks that
// it is listed), so --fail-on-warn passes a server whose contracts cover
// one of its two locked tools; a contract whose input still holds a
// "<fill in ...>" value is not called, is reported, and fails only under
// --fail-on-warn; a disabled one is neither called nor reported.
func TestCheckCoverageFollowsTheContracts(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REPORT_API_TOKEN": "t"}
	dir := callsDir(t, nil, `    calls:
      list_report_dates: {expect: {contains: "2026-08-01"}}
`)
	if r := runBin(t, dir, env, "check", "--fail-on-warn"); r.code != exitOK {
		t.Fatalf("--fail-on-warn with a locked tool without a contract: want exit 0, got %s", r)
	}
	dir = callsDir(t, nil, `    calls:
      list_report_dates: {expect: {contains: "2026-08-01"}}
      fetch_daily_report: {input: {date: "<fill in: string, the report's date>"}}
      delete_report: {disabled: true, allowSideEffects: true, $comment: "proposed"}
`)
	r := runBin(t, dir, env, "check", "--receipt", "receipt.json")
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "stdout", r.stdout, "1 of 1 call passed",
		`info: report: 1 contract not called until the "<fill in ...>" values of `, "-> fetch_daily_report (input.date)")
	if receipt := string(readFile(t, filepath.Join(dir, "receipt.json"))); strings.Contains(receipt, `"tool": "delete_report"`) || strings.Contains(receipt, `"tool": "fetch_daily_report"`) {
		t.Errorf("a disabled or pending contract was called: %s", receipt)
	}
	r = runBin(t, dir, env, "check", "--fail-on-warn")
	if r.code != exitConfig {
		t.Fatalf("--fail-on-warn with a contract to fill in: want exit 78, got %s", r)
	}
	assertContains(t, "stdout", r.stdout, "  - report: 1 contract not called until the")
}

// calls: auto: check calls the server's read-only tool that needs no input
// (list_report_dates) and nothing else; a revoked token fails it as a
// rejected credential.
func TestCheckAutoCalls(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REPORT_API_TOKEN": "calls-secret-token-1"}
	for _, tc := range []struct {
		behavior string
		code     int
		lines    []string
	}{
		{"healthy", exitOK, []string{"(2 tools verified across 1 server; 1 of 1 call passed)"}},
		{"call-is-error", exitConfig, []string{"0 of 1 call passed",
			"  - report: call list_report_dates failed (credential_rejected): credential env:REPORT_API_TOKEN rejected: upstream API error"}},
	} {
		t.Run(tc.behavior, func(t *testing.T) {
			t.Parallel()
			dir := callsDir(t, []string{"--behavior", tc.behavior}, "    calls: auto\n")
			r := runBin(t, dir, env, "check")
			if r.code != tc.code {
				t.Fatalf("want exit %d, got %s", tc.code, r)
			}
			assertContains(t, "stdout", r.stdout, tc.lines...)
			if strings.Contains(r.stdout, "fetch_daily_report failed") {
				t.Errorf("calls: auto called a tool that needs input:\n%s", r.stdout)
			}
		})
	}
}

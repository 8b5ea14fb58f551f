package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadCalls(t *testing.T) {
	cfg, err := load("testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Server{}
	for _, s := range cfg.Servers {
		byName[s.Name] = s
	}
	report := byName["report"]
	var tools []string
	for _, c := range report.Contracts {
		tools = append(tools, c.Tool)
	}
	if got := strings.Join(tools, " "); got != "fetch_daily_report list_report_dates reset_cache" {
		t.Fatalf("contracts = %s: the file's and the inline ones, sorted", got)
	}
	td, _ := filepath.Abs("testdata")
	if report.ContractsFile != filepath.Join(td, "report.tools.json") || report.CallSchedule != "@every 5m" ||
		report.CallTimeout != 15*time.Second || !slices.Contains(report.AllowDestructive, "reset_cache") || slices.Contains(report.AllowDestructive, "fetch_daily_report") {
		t.Errorf("report: file %s schedule %s timeout %s opt-in %v", report.ContractsFile, report.CallSchedule, report.CallTimeout, report.AllowDestructive)
	}
	fetch := report.Contracts[0]
	if string(fetch.Input) != `{"date":"2026-08-01"}` || fetch.Retry.Attempts != 2 || fetch.Retry.Delay != 500*time.Millisecond {
		t.Errorf("fetch_daily_report contract: %+v", fetch)
	}
	if !report.Contracts[2].AllowSideEffects || report.Contracts[2].Expect.ErrorCode == nil {
		t.Errorf("reset_cache contract: %+v", report.Contracts[2])
	}
	// Defaults apply to a server without calls; it has nothing to call.
	remote := byName["remote"]
	if remote.HasCalls() || remote.CallSchedule != "@every 10m" || remote.CallTimeout != 20*time.Second {
		t.Errorf("remote: %d contracts, schedule %s, timeout %s", len(remote.Contracts), remote.CallSchedule, remote.CallTimeout)
	}
	if d := report.CallDeadline(report.Timeout, true, 0); d != 5*time.Second+3*15*time.Second {
		t.Errorf("CallDeadline = %s", d)
	}
}

func TestLoadMcpProbeConfigErrors(t *testing.T) {
	_, err := readClientConfig("testdata/bad/clients/mcp-probe.config.json")
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`servers[0]: has no name; give each server a "name"`,
		`servers.b: has no target; give a URL (http, sse) or a command line (stdio)`,
		`servers.c.toolsFile:`, `cannot read it`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

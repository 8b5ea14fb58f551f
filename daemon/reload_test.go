package daemon

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A broken configuration file keeps the running configuration (and its
// probes) and sets the reload metric to 0; a fixed one swaps in, sets it to
// 1, drops a removed server from every output at once and probes an added
// one promptly.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", `{"alpha": ["fetch_daily_report", "list_report_dates"], "beta": ["fetch_daily_report", "list_report_dates"]}`)
	healthy := stdioServer(probetest.Config{}, nil)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 100ms"},
		"servers":  map[string]any{"alpha": healthy, "beta": healthy},
	})
	h := start(t, path, Options{EnableLifecycle: true})
	h.waitState("alpha", verdict.StateOK)
	h.waitState("beta", verdict.StateOK)
	if m := h.metricsText(); !hasSample(m, "mcpwatch_config_last_reload_successful 1") {
		t.Fatalf("reload metric is not 1 at start")
	}

	// Broken: an unknown key. The old configuration keeps probing.
	if err := os.WriteFile(path, []byte("servers:\n  alpha:\n    comand: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := h.post("/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(body, "comand") {
		t.Errorf("POST /-/reload of a broken file = %d %q, want 500 naming the bad key", code, body)
	}
	if m := h.metricsText(); !hasSample(m, "mcpwatch_config_last_reload_successful 0") {
		t.Errorf("reload metric is not 0 after a failed reload")
	}
	before := h.status("beta").Probes
	waitFor(t, "beta to keep being probed on the old configuration", func() bool {
		return h.status("beta").Probes >= before+2
	})
	if !slices.Contains(h.d.serverNames(), "alpha") || !slices.Contains(h.d.serverNames(), "beta") {
		t.Errorf("servers after a failed reload: %v", h.d.serverNames())
	}

	// Fixed: beta removed, gamma added on a schedule so long that only the
	// prompt probe of an added server can reach it in this test.
	writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 100ms"},
		"servers": map[string]any{
			"alpha": healthy,
			"gamma": merge(healthy, map[string]any{"schedule": "@every 1h"}),
		},
	})
	if err := h.d.Reload(); err != nil {
		t.Fatalf("reload of a fixed file: %v", err)
	}
	m := h.metricsText()
	if !hasSample(m, "mcpwatch_config_last_reload_successful 1") {
		t.Errorf("reload metric is not 1 after a good reload")
	}
	if strings.Contains(m, `server="beta"`) {
		t.Errorf("/metrics still has series of the removed server beta")
	}
	if _, page := h.get("/"); strings.Contains(page, "beta") {
		t.Errorf("the status page still shows the removed server beta")
	}
	if _, api := h.get("/api/v1/servers"); strings.Contains(api, "beta") {
		t.Errorf("the JSON API still shows the removed server beta")
	}
	if code, _ := h.get("/server/beta"); code != http.StatusNotFound {
		t.Errorf("GET /server/beta = %d, want 404", code)
	}
	h.waitState("gamma", verdict.StateOK)
	if m := h.metricsText(); !strings.Contains(m, `mcpwatch_probe_success{server="gamma"} 1`) {
		t.Errorf("/metrics lacks the added server gamma")
	}
}

// A lock file updated on disk is used at the next probe without a reload;
// one that does not parse leaves the last good one in force.
func TestLockFileChangesArePickedUp(t *testing.T) {
	dir := t.TempDir()
	lock := writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report"]}`)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 100ms"},
		"servers":  map[string]any{"report": stdioServer(probetest.Config{}, nil)},
	})
	h := start(t, path, Options{})
	st := h.waitState("report", verdict.StateOK)
	if st.ToolsExpected != 1 || len(st.Diff.Extra) != 1 {
		t.Fatalf("expected/extra = %d/%v, want 1 and list_report_dates extra", st.ToolsExpected, st.Diff.Extra)
	}

	// Written by an atomic rename, as mcpwatch lock does.
	writeFile(t, dir, "next.json", `{"report": ["fetch_daily_report", "list_report_dates", "send_report"]}`)
	if err := os.Rename(dir+"/next.json", lock); err != nil {
		t.Fatal(err)
	}
	st = h.waitState("report", verdict.StateMissing)
	if strings.Join(st.Diff.Missing, " ") != "send_report" {
		t.Errorf("missing = %v, want [send_report]", st.Diff.Missing)
	}

	// Renamed into place too: a plain write could be read half-done (empty,
	// then malformed), which is two different errors.
	writeFile(t, dir, "broken.json", `{"report": [`)
	if err := os.Rename(dir+"/broken.json", lock); err != nil {
		t.Fatal(err)
	}
	seen := h.status("report").Probes
	waitFor(t, "two probes after the lock broke", func() bool { return h.status("report").Probes >= seen+2 })
	if st := h.status("report"); st.State != verdict.StateMissing || st.ToolsExpected != 3 {
		t.Errorf("after a malformed lock: state %s expected %d, want the last good lock (missing, 3)", st.State, st.ToolsExpected)
	}
	errorsLogged := 0
	for _, e := range h.logs.All() {
		if strings.HasPrefix(e.Message, "cannot read the lock file") {
			errorsLogged++
		}
	}
	if errorsLogged != 1 {
		t.Errorf("the malformed lock was logged %d times, want once", errorsLogged)
	}

	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to be unlocked once the lock is gone", func() bool {
		st := h.status("report")
		return !st.Diff.Locked && st.State == verdict.StateOK
	})
}

func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// A tool or a server taken out of the lock leaves no stale series, and a
// tool added to it shows as missing, long before the server's next probe:
// the diff is made again from the last observation when the lock changes.
func TestLockChangeLeavesNoStaleSeries(t *testing.T) {
	dir := t.TempDir()
	lock := writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report", "list_report_dates", "gone_tool"]}`)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"report": stdioServer(probetest.Config{}, nil)},
	})
	h := start(t, path, Options{})
	h.waitState("report", verdict.StateMissing)
	relock := func(content string) {
		t.Helper()
		writeFile(t, dir, "next.json", content)
		if err := os.Rename(filepath.Join(dir, "next.json"), lock); err != nil {
			t.Fatal(err)
		}
	}

	relock(`{"report": ["fetch_daily_report", "list_report_dates"]}`)
	waitFor(t, "gone_tool's series to go", func() bool { return !strings.Contains(h.metricsText(), `tool="gone_tool"`) })
	if st := h.status("report"); st.State != verdict.StateOK || st.Probes != 1 {
		t.Errorf("state %s after %d probes, want ok from the one probe", st.State, st.Probes)
	}

	relock(`{"report": ["fetch_daily_report", "list_report_dates", "new_tool"]}`)
	waitFor(t, "new_tool to show as missing", func() bool {
		return strings.Contains(h.metricsText(), `mcpwatch_tool_missing{server="report",tool="new_tool"} 1`)
	})
	if msgs := h.messages("report"); slices.Index(msgs, "locked tools missing") < 0 {
		t.Errorf("no log line for the tool the lock now misses: %q", msgs)
	}

	relock(`{"other": ["x"]}`)
	waitFor(t, "report's lock series to go", func() bool {
		return !strings.Contains(h.metricsText(), `mcpwatch_tools_expected{server="report"}`)
	})
	if m := h.metricsText(); strings.Contains(m, `mcpwatch_tool_missing{server="report"`) || strings.Contains(m, `mcpwatch_tools_missing{server="report"}`) {
		t.Errorf("/metrics keeps lock series of a server the lock no longer has:\n%s", m)
	}
}

// hasSample reports whether a scrape holds the sample line, whole: a
// substring would also match the HELP text ("..._successful 1 if ...").
func hasSample(scrape, line string) bool {
	return strings.Contains("\n"+scrape, "\n"+line+"\n")
}

package daemon

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// A broken configuration file keeps the running configuration (and its
// probes) and sets the reload metric to 0; a fixed one swaps in, sets it to
// 1, drops a removed server from every output at once and probes an added
// one promptly.
func TestReload(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", `{"alpha": ["fetch_daily_report", "list_report_dates"], "beta": ["fetch_daily_report", "list_report_dates"]}`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 100ms"},
			"servers":  map[string]any{"alpha": fakeServerConfig(nil), "beta": fakeServerConfig(nil)},
		}, newFakeProber(), Options{EnableLifecycle: true})
		s.ready()
		if a, b := s.status("alpha"), s.status("beta"); a.State != verdict.StateOK || b.State != verdict.StateOK {
			t.Fatalf("states %s and %s after the first round, want ok", a.State, b.State)
		}
		if m := s.metricsText(); !hasSample(m, "mcpwatch_config_last_reload_successful 1") {
			t.Fatalf("reload metric is not 1 at start")
		}

		// Broken: an unknown key. The old configuration keeps probing.
		path := filepath.Join(dir, "mcpwatch.yml")
		if err := os.WriteFile(path, []byte("servers:\n  alpha:\n    comand: nope\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, body := s.serve("POST", "/-/reload")
		if code != http.StatusInternalServerError || !strings.Contains(body, "comand") {
			t.Errorf("POST /-/reload of a broken file = %d %q, want 500 naming the bad key", code, body)
		}
		if m := s.metricsText(); !hasSample(m, "mcpwatch_config_last_reload_successful 0") {
			t.Errorf("reload metric is not 0 after a failed reload")
		}
		before := s.probes("beta")
		s.advance(time.Second)
		if n := s.probes("beta") - before; n < 9 {
			t.Errorf("beta was probed %d times in a second on the old configuration, want about 10", n)
		}
		if !slices.Contains(s.d.serverNames(), "alpha") || !slices.Contains(s.d.serverNames(), "beta") {
			t.Errorf("servers after a failed reload: %v", s.d.serverNames())
		}

		// Fixed: beta removed, gamma added on a schedule so long that only
		// the prompt probe of an added server can reach it in this test.
		writeConfig(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 100ms"},
			"servers": map[string]any{
				"alpha": fakeServerConfig(nil),
				"gamma": fakeServerConfig(map[string]any{"schedule": "@every 1h"}),
			},
		})
		if err := s.d.Reload(); err != nil {
			t.Fatalf("reload of a fixed file: %v", err)
		}
		m := s.metricsText()
		if !hasSample(m, "mcpwatch_config_last_reload_successful 1") {
			t.Errorf("reload metric is not 1 after a good reload")
		}
		if strings.Contains(m, `server="beta"`) {
			t.Errorf("/metrics still has series of the removed server beta")
		}
		if _, page := s.get("/"); strings.Contains(page, "beta") {
			t.Errorf("the status page still shows the removed server beta")
		}
		if _, api := s.get("/api/v1/servers"); strings.Contains(api, "beta") {
			t.Errorf("the JSON API still shows the removed server beta")
		}
		if code, _ := s.get("/server/beta"); code != http.StatusNotFound {
			t.Errorf("GET /server/beta = %d, want 404", code)
		}
		// Added servers are probed within Options.AddedSpread (1 s).
		s.advance(time.Second)
		if st := s.status("gamma"); st.State != verdict.StateOK || st.Probes != 1 {
			t.Errorf("gamma a second after it was added: %s after %d probes, want ok after 1", st.State, st.Probes)
		}
		if m := s.metricsText(); !strings.Contains(m, `mcpwatch_probe_success{server="gamma"} 1`) {
			t.Errorf("/metrics lacks the added server gamma")
		}
	})
}

// A lock file updated on disk is used within lockCheckInterval without a
// reload (probes take the lock as last read); one that does not parse
// leaves the last good one in force.
func TestLockFileChangesArePickedUp(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		lock := writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report"]}`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 100ms"},
			"servers":  map[string]any{"report": fakeServerConfig(nil)},
		}, newFakeProber(), Options{})
		s.ready()
		st := s.status("report")
		if st.State != verdict.StateOK || st.ToolsExpected != 1 || len(st.Diff.Extra) != 1 {
			t.Fatalf("state %s, expected/extra = %d/%v; want ok, 1 and list_report_dates extra", st.State, st.ToolsExpected, st.Diff.Extra)
		}

		// Written by an atomic rename, as mcpwatch lock does.
		writeFile(t, dir, "next.json", `{"report": ["fetch_daily_report", "list_report_dates", "send_report"]}`)
		if err := os.Rename(filepath.Join(dir, "next.json"), lock); err != nil {
			t.Fatal(err)
		}
		s.advance(lockCheckInterval)
		st = s.status("report")
		if st.State != verdict.StateMissing || strings.Join(st.Diff.Missing, " ") != "send_report" {
			t.Errorf("state %s, missing = %v; want missing [send_report]", st.State, st.Diff.Missing)
		}

		// Renamed into place too: a plain write could be read half-done
		// (empty, then malformed), which is two different errors.
		writeFile(t, dir, "broken.json", `{"report": [`)
		if err := os.Rename(filepath.Join(dir, "broken.json"), lock); err != nil {
			t.Fatal(err)
		}
		seen := s.probes("report")
		s.advance(time.Second)
		if st := s.status("report"); s.probes("report") < seen+2 || st.State != verdict.StateMissing || st.ToolsExpected != 3 {
			t.Errorf("after a malformed lock: state %s expected %d, want the last good lock (missing, 3)", st.State, st.ToolsExpected)
		}
		errorsLogged := 0
		for _, e := range s.logs.All() {
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
		s.advance(lockCheckInterval)
		if st := s.status("report"); st.Diff.Locked || st.State != verdict.StateOK {
			t.Errorf("once the lock is gone: locked %t, state %s; want unlocked and ok", st.Diff.Locked, st.State)
		}
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
// the diff is made again from the last observation when the lock changes
// (the lock file is looked at every second).
func TestLockChangeLeavesNoStaleSeries(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		lock := writeFile(t, dir, "mcp-tools.lock.json", `{"report": ["fetch_daily_report", "list_report_dates", "gone_tool"]}`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"report": fakeServerConfig(nil)},
		}, newFakeProber(), Options{})
		s.ready()
		if st := s.status("report"); st.State != verdict.StateMissing {
			t.Fatalf("state %s, want missing (gone_tool)", st.State)
		}
		relock := func(content string) {
			t.Helper()
			writeFile(t, dir, "next.json", content)
			if err := os.Rename(filepath.Join(dir, "next.json"), lock); err != nil {
				t.Fatal(err)
			}
			s.advance(lockCheckInterval)
		}

		relock(`{"report": ["fetch_daily_report", "list_report_dates"]}`)
		if m := s.metricsText(); strings.Contains(m, `tool="gone_tool"`) {
			t.Errorf("gone_tool's series stay a check after it left the lock")
		}
		if st := s.status("report"); st.State != verdict.StateOK || st.Probes != 1 {
			t.Errorf("state %s after %d probes, want ok from the one probe", st.State, st.Probes)
		}

		relock(`{"report": ["fetch_daily_report", "list_report_dates", "new_tool"]}`)
		if m := s.metricsText(); !strings.Contains(m, `mcpwatch_tool_missing{server="report",tool="new_tool"} 1`) {
			t.Errorf("new_tool does not show as missing a check after it entered the lock")
		}
		if msgs := s.messages("report"); slices.Index(msgs, "locked tools missing") < 0 {
			t.Errorf("no log line for the tool the lock now misses: %q", msgs)
		}

		relock(`{"other": ["x"]}`)
		m := s.metricsText()
		if strings.Contains(m, `mcpwatch_tools_expected{server="report"}`) || strings.Contains(m, `mcpwatch_tool_missing{server="report"`) ||
			strings.Contains(m, `mcpwatch_tools_missing{server="report"}`) {
			t.Errorf("/metrics keeps lock series of a server the lock no longer has:\n%s", m)
		}
		if st := s.status("report"); st.Probes != 1 {
			t.Errorf("%d probes: the lock changes were judged by probing, want from the one observation", st.Probes)
		}
	})
}

// hasSample reports whether a scrape holds the sample line, whole: a
// substring would also match the HELP text ("..._successful 1 if ...").
func hasSample(scrape, line string) bool {
	return strings.Contains("\n"+scrape, "\n"+line+"\n")
}

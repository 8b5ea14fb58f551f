package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The lines about a server's state name lists one way (missing=a,b and
// was_missing=a,b alike), and a failure carries the whole stderr tail. The
// probes are the fake's: what is tested is the line, not how a server
// stalls (a real stalling server and a 500 ms deadline made this test fail
// on a loaded machine, its probe timing out before the server had written
// its stderr).
func TestTransitionLogShape(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", reportLock)
		fake := newFakeProber()
		fake.set("report", func(s *fakeServer) { s.tools = []string{} }) // an empty credential: no tools
		const tail = "recv initialize\nrecv tools/list\nstalling tools/list\n\n"
		fake.set("stall", func(s *fakeServer) { s.fail, s.took, s.stderr = probe.ReasonTimeout, 500*time.Millisecond, tail })
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"report": fakeServerConfig(nil), "stall": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		fake.set("report", func(s *fakeServer) { s.tools = nil }) // the token is back
		if code, body := s.get("/probe?server=report"); code != 200 {
			t.Fatalf("/probe = %d %s", code, body)
		}

		missing := s.line("report", "first probe: locked tools missing")
		if got := missing["missing"]; got != "fetch_daily_report,list_report_dates" {
			t.Errorf("missing = %#v, want fetch_daily_report,list_report_dates", got)
		}
		recovered := s.line("report", "recovered")
		if recovered["was"] != "missing" || recovered["was_missing"] != missing["missing"] {
			t.Errorf("recovered: was=%#v was_missing=%#v; want missing and the same list as missing=", recovered["was"], recovered["was_missing"])
		}
		failed := s.line("stall", "first probe: probe failed")
		if stderr := failed["stderr"]; stderr != sanitize.Text(strings.TrimRight(tail, "\n")) || failed["reason"] != "timeout" {
			t.Errorf("stderr = %q reason %v, want the whole tail, every line (its breaks escaped), without the trailing blank lines", stderr, failed["reason"])
		}
	})
}

package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A canary call whose server says it cannot reach its service (Context7's
// normal result "Error searching libraries: TypeError: fetch failed")
// turns the server upstream_unreachable: the page says the service is
// unreachable, not that a tool broke, the API and the metric quote the
// server, and nothing is called credential_rejected. The service back,
// it is ok again and the series goes.
func TestDaemonUpstreamUnreachable(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := newFakeProber()
		fake.set("docs", func(s *fakeServer) { s.readOnly = []string{"list_report_dates"} })
		doc := map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 1m", "calls": "auto"},
			"servers":  map[string]any{"docs": fakeServerConfig(nil)},
		}
		s := simulate(t, dir, doc, fake, Options{History: 5})
		s.ready()
		s.advance(2 * time.Minute)
		if st := s.status("docs"); st.State != verdict.StateOK {
			t.Fatalf("state %s before the outage, want ok", st.State)
		}

		const said = "Error searching libraries: TypeError: fetch failed"
		down := contracts.Outcome{Reason: probe.ReasonUpstreamUnreachable, Message: "upstream unreachable: " + said,
			Upstream: &credential.Upstream{Marker: "fetch failed", Quote: said}, Attempts: []contracts.Attempt{{Response: said}}}
		fake.set("docs", func(s *fakeServer) { s.calls = map[string]contracts.Outcome{"list_report_dates": down} })
		s.advance(time.Minute)
		st := s.status("docs")
		if st.State != verdict.StateUpstreamUnreachable || st.Quote != said || st.Credential != "" {
			t.Fatalf("state %s quote %q credential %q, want upstream_unreachable quoting the server", st.State, st.Quote, st.Credential)
		}
		_, page := s.get("/")
		if !strings.Contains(page, "service unreachable") || !strings.Contains(page, said) || strings.Contains(page, "credential</strong>") {
			t.Errorf("the status page does not say the service is unreachable, in the server's words")
		}
		want := `mcpwatch_upstream_unreachable_info{message="` + said + `",server="docs",tool="list_report_dates"} 1`
		if m := s.metricsText(); !strings.Contains(m, want) || strings.Contains(m, "mcpwatch_credential_rejected_info{") {
			t.Errorf("/metrics lacks %s, or names a rejected credential:\n%s", want, grepLines(m, "unreachable"))
		}

		fake.set("docs", func(s *fakeServer) { s.calls = nil })
		s.advance(time.Minute)
		if st := s.status("docs"); st.State != verdict.StateOK || st.Quote != "" {
			t.Errorf("state %s quote %q once the service is back, want ok", st.State, st.Quote)
		}
		if m := s.metricsText(); strings.Contains(m, "mcpwatch_upstream_unreachable_info{") {
			t.Errorf("the series stays once the service is back")
		}
	})
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

package daemon

import (
	"strings"
	"testing"
)

// One tool name of 3 MB made a 3 MB status page row, a 12 MB server page,
// a 9 MB API answer and a 3 MB log line. Every output for people shows it
// cut; the JSON API keeps it whole (the probe's list cap bounds it).
func TestLongToolNameIsCut(t *testing.T) {
	bubble(t, func(t *testing.T) {
		long := "leak_" + strings.Repeat("n", 3<<20)
		fake := newFakeProber()
		fake.set("hostile", func(s *fakeServer) { s.tools = []string{"fetch_daily_report", long} })
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", `{"hostile": ["fetch_daily_report", "list_report_dates"]}`)
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"lock":     "mcp-tools.lock.json",
			"servers":  map[string]any{"hostile": fakeServerConfig(map[string]any{"forbid": []string{"leak_*"}})},
		}, fake, Options{})
		s.ready()
		shown := "leak_" + strings.Repeat("n", 50)
		for _, path := range []string{"/", "/server/hostile"} {
			code, page := s.get(path)
			t.Logf("GET %s: %d bytes", path, len(page))
			if code != 200 || len(page) > 256<<10 || !strings.Contains(page, shown) || !strings.Contains(page, "…") {
				t.Errorf("GET %s: %d, %d bytes, the name cut: %v", path, code, len(page), strings.Contains(page, "…"))
			}
		}
		for _, e := range s.logs.All() {
			for k, v := range e.ContextMap() {
				if str, ok := v.(string); ok && len(str) > 16<<10 {
					t.Errorf("log line %q: field %s of %d bytes", e.Message, k, len(str))
				}
			}
		}
		if st := s.status("hostile"); !strings.Contains(strings.Join(st.Tools, ","), long) {
			t.Error("the API lost the whole name")
		}
		_, api := s.get("/api/v1/servers/hostile")
		t.Logf("GET /api/v1/servers/hostile: %d bytes (names whole: the list cap bounds them)", len(api))
	})
}

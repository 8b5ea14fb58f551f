package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestEndpoints(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers": map[string]any{
			"report": stdioServer(probetest.Config{Behavior: probetest.TokenGated, Token: "example-token"},
				map[string]string{"REPORT_API_TOKEN": "${file:token}"}),
		},
	})
	writeFile(t, dir, "token", "a-revoked-token") // listed no tools
	h := start(t, path, Options{})
	h.waitState("report", verdict.StateMissing)
	waitFor(t, "readiness after the first round", h.d.Ready)

	tests := []struct {
		name, method, path string
		code               int
		want               []string
	}{
		{"healthy", "GET", "/-/healthy", 200, []string{"healthy"}},
		{"ready", "GET", "/-/ready", 200, []string{"ready"}},
		{"reload needs POST", "GET", "/-/reload", 405, nil},
		{"probe", "GET", "/probe?server=report", 200, []string{
			`mcpwatch_probe_success{server="report"} 1`,
			`mcpwatch_tool_missing{server="report",tool="fetch_daily_report"} 1`,
		}},
		{"probe debug", "GET", "/probe?server=report&debug=true", 200, []string{
			"Transcript:", "tools/list", "missing:          [fetch_daily_report list_report_dates]",
			`mcpwatch_tools_missing{server="report"} 2`,
		}},
		{"probe by target, as blackbox_exporter is asked", "GET", "/probe?target=report", 200, []string{
			`mcpwatch_probe_success{server="report"} 1`,
		}},
		{"probe without server", "GET", "/probe", 400, []string{"target=NAME"}},
		{"probe of two servers", "GET", "/probe?server=report&target=other", 400, []string{"name two servers"}},
		{"probe of an unknown server", "GET", "/probe?server=nope", 404, nil},
		{"api", "GET", "/api/v1/servers", 200, []string{`"name": "report"`, `"state": "missing"`, `"fetch_daily_report"`}},
		{"api server", "GET", "/api/v1/servers/report", 200, []string{`"history"`, `"trigger": "schedule"`,
			// The verdict and ok agree; the probe itself succeeded.
			`"state": "missing"`, `"ok": false`, `"probe_success": true`,
			`"connect_seconds": `, `"total_seconds": `, `"duration_seconds": `}},
		{"api unknown server", "GET", "/api/v1/servers/nope", 404, nil},
		{"status page", "GET", "/", 200, []string{"MISSING", "fetch_daily_report", "list_report_dates", `href="server/report"`}},
		{"server page", "GET", "/server/report", 200, []string{"Last probes", "fetch_daily_report", "list_report_dates"}},
		{"unknown page", "GET", "/nope", 404, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, h.http.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			b := string(raw)
			if resp.StatusCode != tc.code {
				t.Fatalf("%s %s = %d, want %d: %s", tc.method, tc.path, resp.StatusCode, tc.code, b)
			}
			for _, want := range tc.want {
				if !strings.Contains(b, want) {
					t.Errorf("%s %s lacks %q:\n%s", tc.method, tc.path, want, b)
				}
			}
		})
	}

	// The on-demand probes went through the same path: recorded in the
	// history as requests.
	st := h.status("report")
	requests := 0
	for _, r := range st.History {
		if r.Trigger == triggerRequest {
			requests++
		}
	}
	if requests != 3 {
		t.Errorf("history holds %d on-demand probes, want 3", requests)
	}
	// The transcript of a debug probe is not kept in the state.
	if st := h.d.Statuses()[0]; st.Last.Transcript != nil {
		t.Errorf("the kept result holds a transcript")
	}

	problems, err := testutil.GatherAndLint(h.d.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// /-/ready answers 503 until the first round of probes has finished, and
// 200 from the moment the last of its probes ends: before the end of the
// first round's spread when the probes end early, at the latest when the
// slowest of them would have timed out.
func TestReadyAfterFirstRound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		took      time.Duration // a probe of b takes this long
		readyAt   time.Duration // when /-/ready turns 200, at the latest
		notBefore time.Duration // and not before
	}{
		// a and b start within the 5 s spread; b ends 2 s later.
		{"probes end", 2 * time.Second, 7 * time.Second, 2 * time.Second},
		// b never answers within its 10 s deadline: ready by the spread,
		// the timeout and a second of slack.
		{"a probe hangs", time.Hour, 17 * time.Second, 16 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				fake := newFakeProber()
				fake.set("b", func(s *fakeServer) { s.took = tc.took })
				s := simulate(t, t.TempDir(), map[string]any{
					"defaults": map[string]any{"schedule": "@every 1h", "timeout": "10s"},
					"servers":  map[string]any{"a": fakeServerConfig(nil), "b": fakeServerConfig(nil)},
				}, fake, Options{})
				began := time.Now()
				ready := func() int { code, _ := s.get("/-/ready"); return code }
				if code := ready(); code != http.StatusServiceUnavailable {
					t.Errorf("/-/ready at start = %d, want 503", code)
				}
				for ready() != http.StatusOK {
					if time.Since(began) > tc.readyAt {
						t.Fatalf("not ready %s after start", time.Since(began))
					}
					time.Sleep(100 * time.Millisecond)
					s.settle()
				}
				if took := time.Since(began); took < tc.notBefore {
					t.Errorf("ready %s after start, before the first round could end", took)
				}
				if tc.took < time.Hour && (s.probes("a") != 1 || s.probes("b") != 1) {
					t.Errorf("ready before the first probes ended")
				}
			})
		})
	}
}

// Names a server chooses (tool names, errors, stderr) and names the
// configuration holds are rendered as text, never as markup.
func TestHostileNamesAreEscaped(t *testing.T) {
	const evilTool = `<script>alert("tool")</script>`
	const evilLocked = `<img src=x onerror=alert(1)>`
	const evilServer = `<b>evil</b>"'&`
	dir := t.TempDir()
	lock, err := json.Marshal(map[string][]string{evilServer: {evilLocked, "list_report_dates"}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "mcp-tools.lock.json", string(lock))
	tools := append(probetest.DefaultTools(), probetest.Tool{Name: evilTool, InputSchema: map[string]any{"type": "object"}})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{evilServer: stdioServer(probetest.Config{Tools: tools}, nil)},
	})
	h := start(t, path, Options{})
	waitFor(t, "the first probe", func() bool {
		st := h.d.Statuses()
		return len(st) == 1 && st[0].Last != nil
	})

	pages := map[string]string{}
	_, pages["/"] = h.get("/")
	code, serverPage := h.get("/" + newRow(details{Status: h.d.Statuses()[0]}, time.Now()).Href)
	if code != http.StatusOK {
		t.Fatalf("server page = %d", code)
	}
	pages["server page"] = serverPage
	for name, page := range pages {
		for _, raw := range []string{"<script>", "<img", "<b>evil"} {
			if strings.Contains(page, raw) {
				t.Errorf("%s holds raw markup %q", name, raw)
			}
		}
		for _, escaped := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&lt;b&gt;evil&lt;/b&gt;"} {
			if !strings.Contains(page, escaped) {
				t.Errorf("%s lacks the escaped text %q", name, escaped)
			}
		}
	}
	if !strings.Contains(serverPage, "&lt;script&gt;alert(&#34;tool&#34;)&lt;/script&gt;") {
		t.Errorf("the server page lacks the escaped extra tool")
	}
	if resp, err := http.Get(h.http.URL + "/"); err == nil {
		resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy = %q", csp)
		}
	}
}

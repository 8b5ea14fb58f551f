package daemon

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestTrendSVG(t *testing.T) {
	ms := time.Millisecond
	points := []trendPoint{
		{level: verdict.StateOK.Level(), listed: true, duration: 20 * ms, tools: 4},
		{level: verdict.StateOK.Level(), listed: true, duration: 40 * ms, tools: 6},
		{level: verdict.StateFailed.Level(), duration: 10 * time.Second},
		{level: verdict.StateMissing.Level(), listed: true, duration: 30 * ms, tools: 5},
		{level: verdict.State("from a newer version").Level(), listed: true, duration: 30 * ms, tools: 5},
	}
	v := newTrendView(points)
	strip := string(v.Strip)
	for _, want := range []string{
		`width="20" height="10"`,
		`<path class="t-critical" d="M8 0h3v10h-3zM12 0h3v10h-3z"/>`, // failed, missing
		`<path class="t-warning" d="M16 0h3v10h-3z"/>`,               // a state this version does not know
		`<path class="t-ok" d="M0 0h3v10h-3zM4 0h3v10h-3z"/>`,
	} {
		if !strings.Contains(strip, want) {
			t.Errorf("strip lacks %s:\n%s", want, strip)
		}
	}
	// Duration on a log scale from the shortest (y 17) to the longest, the
	// timeout (y 1): 40 ms and 30 ms stand off the floor.
	if !strings.Contains(string(v.Duration), `d="M2 17h0L6 16L10 1L14 16L18 16"`) || v.DurationRange != "20ms–10s" {
		t.Errorf("duration sparkline %s (%s)", v.Duration, v.DurationRange)
	}
	// Tools from the fewest to the most; the failed probe breaks the line,
	// and the point after it starts again.
	if !strings.Contains(string(v.Tools), `d="M2 17h0L6 1M14 9h0L18 9"`) || v.ToolsRange != "4–6 tools" {
		t.Errorf("tools sparkline %s (%s)", v.Tools, v.ToolsRange)
	}
	if got := newTrendView(nil); got.Strip != "" || got.Duration != "" || got.Tools != "" {
		t.Errorf("no probes drew %+v", got)
	}
	// One probe: a cell of the strip, no line.
	if got := newTrendView(points[:1]); got.Strip == "" || got.Duration != "" || got.Tools != "" {
		t.Errorf("one probe drew %+v", got)
	}
	// Only failed probes: no tools line at all.
	if got := newTrendView(points[2:3:3]); got.Tools != "" || got.Strip == "" {
		t.Errorf("a failed probe alone drew tools %q, strip %q", got.Tools, got.Strip)
	}
	if got := newTrendView([]trendPoint{points[2], points[2]}); got.Tools != "" || got.Duration == "" {
		t.Errorf("two failed probes drew tools %q, duration %q", got.Tools, got.Duration)
	}
	if got := string(svgOpen(nil, 1, 1, `"><script>x</script>`)); strings.Contains(got, "<script>") || !strings.Contains(got, "&lt;script&gt;") {
		t.Errorf("the title is not escaped: %s", got)
	}
}

// rejectedServerDaemon is a daemon of three servers, nothing probed but
// recorded as probes would be: "api-ok" passes, "bad-timeout" times out, and
// "gh-rejected" has 20 probes: 14 passing with 4 to 6 tools, a timeout, 2
// passing, then 3 whose credential the server rejected, quoting hostile
// words.
func rejectedServerDaemon(t testing.TB) *Daemon {
	t.Helper()
	cfg := &config.Config{Defaults: config.Defaults{Schedule: "@every 1h", Timeout: 10 * time.Second}}
	for _, name := range []string{"api-ok", "bad-timeout", "gh-rejected"} {
		cfg.Servers = append(cfg.Servers, config.Server{Name: name, URL: "https://" + name + ".example/mcp", Transport: probe.TransportHTTP})
	}
	cfg.Normalize()
	d, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	d.ready.Store(true)
	at := time.Now().Add(-time.Hour)
	ok := func(tools int, took time.Duration) (*probe.Result, []lockstore.Observed) {
		res := &probe.Result{OK: true, Transport: probe.TransportHTTP, Era: probe.EraLegacy, ProtocolVersion: "2025-06-18",
			Started: at, Timings: probe.Timings{Total: took}}
		var obs []lockstore.Observed
		for i := range tools {
			name := fmt.Sprintf("tool_%d", i)
			res.Tools = append(res.Tools, probe.Tool{Name: name})
			obs = append(obs, lockstore.Observed{Name: name})
		}
		return res, obs
	}
	failed := func(reason probe.Reason, msg string) *probe.Result {
		return &probe.Result{Transport: probe.TransportHTTP, Started: at, Timings: probe.Timings{Total: 10 * time.Second}, Reason: reason, Error: msg}
	}
	record := func(name string, res *probe.Result, obs []lockstore.Observed) {
		s, _ := d.lookup(name)
		s.recordResult(triggerSchedule, res, obs, nil, nil, nil)
		at = at.Add(time.Minute)
	}
	res, obs := ok(3, 80*time.Millisecond)
	record("api-ok", res, obs)
	record("bad-timeout", failed(probe.ReasonTimeout, "no answer to tools/list within 10s"), nil)
	for i := range 20 {
		switch {
		case i == 14:
			record("gh-rejected", failed(probe.ReasonTimeout, "no answer to initialize within 10s"), nil)
		case i >= 17:
			res := failed(probe.ReasonCredentialRejected, "HTTP 401 from https://gh-rejected.example/mcp")
			res.Timings.Total = 120 * time.Millisecond
			res.Credentials = &probe.CredentialStatus{Rejected: &probe.CredentialRejection{
				Credential: "header:Authorization", Marker: "HTTP 401", Quote: `Bad credentials <script>alert(1)</script>`}}
			record("gh-rejected", res, nil)
		default:
			res, obs := ok(4+i%3, time.Duration(150+10*i)*time.Millisecond)
			record("gh-rejected", res, obs)
		}
	}
	return d
}

// The status page of a server whose credential was rejected, with 20
// probes kept: listed first, with its credential's name and the server's
// words (escaped), and its probes drawn as a strip and two sparklines of
// inline SVG; the server page draws them too. With $MCPWATCH_SHOTS set,
// both pages are written there, for a browser with scripts off.
func TestStatusPageRejectedCredentialWithHistory(t *testing.T) {
	d := rejectedServerDaemon(t)
	page, rec := indexHTML(t, d, "")
	first := strings.Index(page, `href="server/gh-rejected"`)
	if first < 0 || first > strings.Index(page, `href="server/bad-timeout"`) || first > strings.Index(page, `href="server/api-ok"`) {
		t.Errorf("the rejected credential is not listed first")
	}
	row := between(page, `href="server/gh-rejected"`, "</tr>")
	for _, want := range []string{
		"CREDENTIAL_REJECTED",
		"header:Authorization rejected: Bad credentials &lt;script&gt;alert(1)&lt;/script&gt;",
		`<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="80" height="10"`, // 20 probes, 4 px each
		`<path class="t-critical" d="M56 0h3v10h-3zM68 0h3v10h-3zM72 0h3v10h-3zM76 0h3v10h-3z"/>`,
		`aria-label="probe duration 120ms to 10s (log scale)"`,
		`aria-label="tools listed 4–6"`,
	} {
		if !strings.Contains(row, want) {
			t.Errorf("the row lacks %s:\n%s", want, row)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("a script on the page")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	server, _ := serverHTML(t, d, "gh-rejected")
	for _, want := range []string{`width="80" height="10"`, "120ms–10s", "4–6 tools", "the last 20"} {
		if !strings.Contains(server, want) {
			t.Errorf("the server page lacks %s", want)
		}
	}
	// One probe kept: its cell, no line.
	if one, _ := serverHTML(t, d, "bad-timeout"); !strings.Contains(one, "the last 1<") || strings.Contains(one, "<dt>Probe duration") {
		t.Errorf("the server page of one probe draws a line, or no strip")
	}
	t.Logf("status page: %d bytes; server page: %d bytes; the row of gh-rejected: %d bytes", len(page), len(server), len(row))
	if dir := os.Getenv("MCPWATCH_SHOTS"); dir != "" {
		for name, html := range map[string]string{"status-rejected.html": page, "server-rejected.html": server} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(html), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func serverHTML(tb testing.TB, d *Daemon, name string) (string, int) {
	tb.Helper()
	rec := httptest.NewRecorder()
	d.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/server/"+url.PathEscape(name), nil))
	if rec.Code != 200 {
		tb.Fatalf("GET /server/%s = %d: %s", name, rec.Code, rec.Body)
	}
	return rec.Body.String(), rec.Code
}

// The status page of 10,000 servers with 20 probes kept each (a strip and
// two sparklines a row) renders its first page under a second, like the
// page without; every row at once is measured and logged.
func TestStatusPage10000WithHistoryUnderASecond(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("timing is meaningless under -race or -short")
	}
	d := newFleet(t, 10000)
	start := time.Now().Add(-time.Hour)
	for i, name := range d.serverNames() {
		s, _ := d.lookup(name)
		for p := range 20 {
			st, reason := verdict.StateOK, probe.Reason("")
			if (i+p)%17 == 0 {
				st, reason = verdict.StateFailed, probe.ReasonTimeout
			}
			s.history.add(Record{Seq: uint64(p + 1), Trigger: triggerSchedule, State: st, Reason: reason,
				Started: start.Add(time.Duration(p) * time.Minute), Duration: time.Duration(20+(i+p)%200) * time.Millisecond, Tools: 4 - p%2})
		}
	}
	for _, q := range []string{"", "?per_page=10000"} {
		best := time.Hour
		var size int
		for range 3 {
			began := time.Now()
			page, _ := indexHTML(t, d, q)
			best, size = min(best, time.Since(began)), len(page)
			if !strings.Contains(page, `<svg class="trend"`) {
				t.Fatalf("no trend drawn on %q", q)
			}
		}
		t.Logf("status page of 10,000 servers with 20 probes each, %q: %s, %d bytes", q, best, size)
		if q == "" && best > time.Second {
			t.Errorf("status page of 10,000 servers (%q) took %s, want under 1s", q, best)
		}
	}
}

// BenchmarkTrendView draws one row's strip and sparklines of 20 probes.
func BenchmarkTrendView(b *testing.B) {
	points := make([]trendPoint, 20)
	for i := range points {
		points[i] = trendPoint{level: verdict.StateOK.Level(), listed: i != 7, duration: time.Duration(20+i*13%90) * time.Millisecond, tools: int32(4 + i%3)}
	}
	points[7].level = verdict.LevelCritical
	b.ReportAllocs()
	for b.Loop() {
		newTrendView(points)
	}
}

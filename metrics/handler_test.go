package metrics_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// logLines is a metrics.Logger that keeps what it is told.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Println(v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(v...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newHandler is the /metrics handler of a daemon over src.
func newHandler(src status.Source, opts ...metrics.HandlerOption) (*metrics.Handler, *metrics.Daemon, *logLines) {
	reg, d := metrics.NewRegistry()
	d.IssuerChecked("github", probe.IssuerAccepted) // the fixture's daemon asked an issuer once
	log := &logLines{}
	return metrics.NewHandler(src, reg, log, opts...), d, log
}

// scrape reads /metrics from h as Prometheus does.
func scrape(t testing.TB, h http.Handler) []*dto.MetricFamily {
	t.Helper()
	resp, body := get(t, h, "/metrics", "gzip")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics = %d: %s", resp.StatusCode, body)
	}
	checkLayout(t, body)
	return parseText(t, body)
}

// With per-server histograms, /metrics has every family, and the
// per-server ones exactly as WriteText writes them.
func TestHandlerServesEverything(t *testing.T) {
	h, d, log := newHandler(newSource(fixtureStatuses()...), metrics.PerServerOperations())
	d.ReloadSucceeded(base)
	mfs := scrape(t, h)
	for _, name := range metrics.Names() {
		if family(mfs, name) == nil {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	for _, mf := range mfs {
		if !slices.Contains(metrics.Names(), mf.GetName()) {
			t.Errorf("%s is served but not in Names()", mf.GetName())
		}
	}
	if err := compareFamilies(mfs, scrapeStatuses(t, fixtureStatuses()...), ownNames()...); err != nil {
		t.Errorf("/metrics differs from WriteText in the per-server families: %v", err)
	}
	lint(t, mfs)
	if log.String() != "" {
		t.Errorf("logged: %s", log)
	}
}

func TestHandlerEncoding(t *testing.T) {
	// A fixed own registry, so two scrapes are byte for byte the same.
	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpwatch_test_own", Help: "A gauge."}))
	h := metrics.NewHandler(newSource(fleet(50, 10)...), own, nil)

	_, plain := get(t, h, "/metrics", "")
	tests := []struct {
		acceptEncoding, contentEncoding string
	}{
		{"", ""},
		{"gzip", "gzip"},
		{"gzip, deflate, br", "gzip"}, // what Go's and Prometheus's clients send
		{"identity", ""},
		{"gzip;q=0", ""},
		{"deflate, gzip;q=0.5", "gzip"},
		{"gzip;q=0, *", ""}, // gzip named and refused
	}
	for _, tt := range tests {
		t.Run(tt.acceptEncoding, func(t *testing.T) {
			resp, body := get(t, h, "/metrics", tt.acceptEncoding)
			if got := resp.Header.Get("Content-Encoding"); got != tt.contentEncoding {
				t.Errorf("Content-Encoding %q, want %q", got, tt.contentEncoding)
			}
			if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/plain; version=0.0.4; charset=utf-8") {
				t.Errorf("Content-Type %q", got)
			}
			if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q", got)
			}
			if body != plain {
				t.Errorf("body of %d bytes differs from the plain one of %d", len(body), len(plain))
			}
		})
	}
	if !strings.HasSuffix(plain, "mcpwatch_test_own 0\n") {
		t.Errorf("the own registry does not follow the servers:\n%s", plain[max(0, len(plain)-300):])
	}
}

// A failing collector of the own registry is logged, and everything else
// is still served, as promhttp's ContinueOnError does.
func TestHandlerContinuesOnOwnError(t *testing.T) {
	reg, _ := metrics.NewRegistry()
	broken := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := reg.Gather()
		return mfs, errors.Join(err, errors.New("collector went wrong"))
	})
	log := &logLines{}
	mfs := scrape(t, metrics.NewHandler(newSource(fixtureStatuses()...), broken, log))
	for _, name := range []string{"mcpwatch_tool_missing", "mcpwatch_servers", "mcpwatch_build_info", "go_goroutines"} {
		if family(mfs, name) == nil {
			t.Errorf("%s missing after the own registry failed", name)
		}
	}
	if !strings.Contains(log.String(), "collector went wrong") {
		t.Errorf("the error was not logged: %q", log)
	}
}

// Should the own registry ever hold a family of a per-server name, the
// scrape still parses: the second family is left out, and logged.
func TestHandlerLeavesOutACollidingFamily(t *testing.T) {
	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpwatch_servers", Help: "A clash."}))
	log := &logLines{}
	mfs := scrape(t, metrics.NewHandler(newSource(fixtureStatuses()...), own, log))
	if got := value(t, mfs, "mcpwatch_servers"); got != 8 {
		t.Errorf("mcpwatch_servers %v, want the rendered 8", got)
	}
	if !strings.Contains(log.String(), "mcpwatch_servers") {
		t.Errorf("the collision was not logged: %q", log)
	}
}

func TestRemovedServerLeavesNoSeries(t *testing.T) {
	src := newSource(fixtureStatuses()...)
	h, _, _ := newHandler(src)
	if n := len(seriesOf(scrape(t, h), "reports")); n == 0 {
		t.Fatal("reports has no series before its removal: the test checks nothing")
	}

	src.set(slices.DeleteFunc(fixtureStatuses(), func(s status.Server) bool { return s.Name == "reports" })...)
	mfs := scrape(t, h)
	if left := seriesOf(mfs, "reports"); len(left) != 0 {
		t.Errorf("series left after the server was removed: %v", left)
	}
	if n := len(seriesOf(mfs, "github")); n == 0 {
		t.Error("the other servers lost their series too")
	}
	if got := value(t, mfs, "mcpwatch_servers"); got != 7 {
		t.Errorf("mcpwatch_servers %v after the removal, want 7", got)
	}
}

func TestRemovedLockedToolLeavesNoSeries(t *testing.T) {
	reports := fixtureStatuses()[2]
	if reports.Name != "reports" {
		t.Fatalf("fixture order changed: got %q", reports.Name)
	}
	src := newSource(reports)
	h, _, _ := newHandler(src)
	before := seriesOf(scrape(t, h), "reports")
	if before["mcpwatch_tool_missing/send_report"] != 1 {
		t.Fatalf("send_report not reported missing before the lock changed: %v", before)
	}

	// The lock drops send_report; the daemon recomputes the diff.
	reports.Diff = lockstore.Diff{
		Locked: true, Expected: []string{"fetch_daily_report", "list_reports"},
		Missing: []string{"fetch_daily_report"},
	}
	src.set(reports)
	after := seriesOf(scrape(t, h), "reports")
	if v, ok := after["mcpwatch_tool_missing/send_report"]; ok {
		t.Errorf("tool_missing for send_report left after it left the lock (value %v)", v)
	}
	want := map[string]float64{
		"mcpwatch_tool_missing/fetch_daily_report": 1,
		"mcpwatch_tool_missing/list_reports":       0,
		"mcpwatch_tools_missing":                   1,
		"mcpwatch_tools_expected":                  2,
	}
	for key, v := range want {
		if got, ok := after[key]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, v)
		}
	}
}

// Scrapes at once share the handler's pools without sharing a buffer: each
// body is the one a scrape alone gets.
func TestConcurrentScrapes(t *testing.T) {
	own := prometheus.NewRegistry() // fixed, so bodies compare byte for byte
	own.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpwatch_test_own", Help: "A gauge."}))
	h := metrics.NewHandler(newSource(fleet(100, 10)...), own, nil)
	_, want := get(t, h, "/metrics", "")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 5 {
				if _, body := get(t, h, "/metrics", []string{"gzip", ""}[i%2]); body != want {
					t.Errorf("a concurrent scrape of %d bytes differs from one alone of %d", len(body), len(want))
				}
			}
		})
	}
	wg.Wait()
}

func TestServeServer(t *testing.T) {
	st := fixtureStatuses()[2]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { metrics.ServeServer(w, r, st) })
	for _, encoding := range []string{"", "gzip"} {
		resp, body := get(t, h, "/probe?server=reports", encoding)
		if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, metrics.ContentType) {
			t.Errorf("Content-Type %q", got)
		}
		if got := resp.Header.Get("Content-Encoding"); got != encoding {
			t.Errorf("Content-Encoding %q, want %q", got, encoding)
		}
		var want strings.Builder
		if err := metrics.WriteServerText(&want, st); err != nil {
			t.Fatal(err)
		}
		if body != want.String() {
			t.Errorf("body differs from WriteServerText:\n%s", body)
		}
	}
}

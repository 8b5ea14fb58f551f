package metrics_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// collectorRegistry is a fresh pedantic registry (it checks every metric
// against its descriptor) holding only a Collector over src.
func collectorRegistry(t testing.TB, src metrics.Source) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(metrics.NewCollector(src)); err != nil {
		t.Fatalf("register collector: %v", err)
	}
	return reg
}

func gather(t testing.TB, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return mfs
}

func family(mfs []*dto.MetricFamily, name string) *dto.MetricFamily {
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// series returns "family{tool or reason...}" => value for every series of a
// server, so a test can say what must and must not be there.
func seriesOf(mfs []*dto.MetricFamily, server string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if label(m, "server") != server {
				continue
			}
			key := mf.GetName()
			for _, lp := range m.GetLabel() {
				if lp.GetName() != "server" {
					key += "/" + lp.GetValue()
				}
			}
			out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}

func TestCollectorRendersStatuses(t *testing.T) {
	reg := collectorRegistry(t, newSource(fixtureStatuses()...))
	want, err := os.Open("testdata/statuses.prom")
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	names := slices.DeleteFunc(metrics.Names(), func(n string) bool {
		return n == "mcpwatch_probe_failures_total"
	})
	if err := testutil.GatherAndCompare(reg, want, names...); err != nil {
		t.Error(err)
	}
}

func TestFailuresByReason(t *testing.T) {
	statuses := fixtureStatuses()
	statuses = append(statuses, metrics.ServerStatus{
		Name: "unknown-reason", Probes: 4,
		// A reason probe forgot to list in probe.Reasons still counts.
		Failures: map[probe.Reason]uint64{"brand_new": 4},
	})
	mfs := gather(t, collectorRegistry(t, newSource(statuses...)))

	tests := []struct {
		server  string
		nonzero map[string]float64
		series  int
	}{
		{"github", map[string]float64{"timeout": 2}, len(probe.Reasons)},
		{"newcomer", map[string]float64{}, len(probe.Reasons)},
		{"search", map[string]float64{"timeout": 3, "connection": 1}, len(probe.Reasons)},
		{"unknown-reason", map[string]float64{"brand_new": 4}, len(probe.Reasons) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			got := map[string]float64{}
			series := 0
			for key, v := range seriesOf(mfs, tt.server) {
				reason, ok := strings.CutPrefix(key, "mcpwatch_probe_failures_total/")
				if !ok {
					continue
				}
				series++
				if v != 0 {
					got[reason] = v
				}
			}
			if series != tt.series {
				t.Errorf("%d failure series, want %d (every known reason from 0)", series, tt.series)
			}
			if !mapsEqual(got, tt.nonzero) {
				t.Errorf("nonzero failures %v, want %v", got, tt.nonzero)
			}
		})
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestRemovedServerLeavesNoSeries(t *testing.T) {
	src := newSource(fixtureStatuses()...)
	reg := collectorRegistry(t, src)
	if n := len(seriesOf(gather(t, reg), "reports")); n == 0 {
		t.Fatal("reports has no series before its removal: the test checks nothing")
	}

	src.set(slices.DeleteFunc(fixtureStatuses(), func(s metrics.ServerStatus) bool { return s.Name == "reports" })...)
	mfs := gather(t, reg)
	if left := seriesOf(mfs, "reports"); len(left) != 0 {
		t.Errorf("series left after the server was removed: %v", left)
	}
	if n := len(seriesOf(mfs, "github")); n == 0 {
		t.Error("the other servers lost their series too")
	}
	if got := gaugeValue(t, reg, "mcpwatch_servers"); got != 4 {
		t.Errorf("mcpwatch_servers %v after the removal, want 4", got)
	}
}

func TestRemovedLockedToolLeavesNoSeries(t *testing.T) {
	reports := fixtureStatuses()[2]
	if reports.Name != "reports" {
		t.Fatalf("fixture order changed: got %q", reports.Name)
	}
	src := newSource(reports)
	reg := collectorRegistry(t, src)
	before := seriesOf(gather(t, reg), "reports")
	if before["mcpwatch_tool_missing/send_report"] != 1 {
		t.Fatalf("send_report not reported missing before the lock changed: %v", before)
	}

	// The lock drops send_report; the daemon recomputes the diff.
	reports.Diff = lockstore.Diff{
		Locked: true, Expected: []string{"fetch_daily_report", "list_reports"},
		Missing: []string{"fetch_daily_report"},
	}
	src.set(reports)
	after := seriesOf(gather(t, reg), "reports")
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

func TestHostileServerLabels(t *testing.T) {
	long := strings.Repeat("A", 10_000)
	forbidden := make([]string, 0, 70)
	for i := range 60 {
		forbidden = append(forbidden, fmt.Sprintf("drop_%02d\xfe\n", i)) // invalid UTF-8, a control character
	}
	for i := range 10 {
		forbidden = append(forbidden, long+strconv.Itoa(i)) // far too long, and equal once cut
	}
	slices.Sort(forbidden)
	hostile := &probe.Result{
		OK: true, Transport: probe.TransportHTTP, Era: probe.EraModern,
		ProtocolVersion: "2026-07-28" + long,
		ServerName:      "\xff\xfeevil\nserver\x00" + long,
		ServerVersion:   "1.0\x1b[31m",
		Tools:           tools(forbidden...),
		Started:         base,
	}
	st := metrics.ServerStatus{
		Name: "hostile", Last: hostile, LastOK: hostile, LastSuccess: base,
		Diff: lockstore.Diff{
			Locked:    true,
			Expected:  []string{long + "1", long + "2", "ok\xff"}, // a lock written from that server
			Missing:   []string{long + "2"},
			Forbidden: forbidden,
		},
	}
	mfs := gather(t, collectorRegistry(t, newSource(st)))

	info := family(mfs, "mcpwatch_server_info").GetMetric()[0]
	for _, name := range []string{"server_name", "server_version", "protocol_version"} {
		v := label(info, name)
		if len(v) > 64 || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\x1b") {
			t.Errorf("%s label %q (%d bytes): want valid UTF-8, no control characters, at most 64 bytes", name, v, len(v))
		}
	}
	if got := label(info, "server_name"); !strings.HasPrefix(got, "\uFFFD\uFFFDevil\uFFFDserver\uFFFD") || !strings.HasSuffix(got, "…") {
		t.Errorf("server_name %q: want the readable part kept and the cut marked", got)
	}

	forbiddenSeries := family(mfs, "mcpwatch_tool_forbidden").GetMetric()
	if len(forbiddenSeries) != 50 {
		t.Errorf("%d tool_forbidden series, want the cap of 50", len(forbiddenSeries))
	}
	if got := family(mfs, "mcpwatch_tools_forbidden").GetMetric()[0].GetGauge().GetValue(); got != 70 {
		t.Errorf("tools_forbidden %v, want the full count 70", got)
	}
	for _, m := range append(forbiddenSeries, family(mfs, "mcpwatch_tool_missing").GetMetric()...) {
		if v := label(m, "tool"); len(v) > 128 || !utf8.ValidString(v) {
			t.Errorf("tool label of %d bytes, valid UTF-8 %v: want at most 128 and valid", len(v), utf8.ValidString(v))
		}
	}
	// The two long locked names are one label once cut: one series, missing
	// because one of them is.
	missing := seriesOf(mfs, "hostile")
	cut := strings.Repeat("A", 125) + "…"
	if v, ok := missing["mcpwatch_tool_missing/"+cut]; !ok || v != 1 {
		t.Errorf("merged tool_missing series for the cut names = %v (present %v), want 1", v, ok)
	}
}

func TestRepeatedNameDoesNotFailTheScrape(t *testing.T) {
	st := fixtureStatuses()[0]
	if got := gaugeValue(t, collectorRegistry(t, newSource(st, st)), "mcpwatch_servers"); got != 1 {
		t.Errorf("mcpwatch_servers %v, want 1", got)
	}
}

func TestLint(t *testing.T) {
	reg, _ := metrics.NewRegistry(newSource(fixtureStatuses()...))
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

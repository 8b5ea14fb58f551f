package metrics_test

import (
	"errors"
	"fmt"
	dto "github.com/prometheus/client_model/go"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestWriteTextMatchesGolden(t *testing.T) {
	golden, err := os.ReadFile("testdata/statuses.prom")
	if err != nil {
		t.Fatal(err)
	}
	got := scrapeStatuses(t, fixtureStatuses()...)
	// The golden file leaves out the failure counters: TestFailuresByReason
	// checks them.
	if err := compareFamilies(got, parseText(t, string(golden)), "mcpwatch_probe_failures_total", "mcpwatch_call_failures_total"); err != nil {
		t.Error(err)
	}
	lint(t, got)
}

// A contracted tool has a series per reason it has failed with, and none
// for the others: 3 series for the fixture's 5 contracted tools.
func TestCallFailuresByReason(t *testing.T) {
	mfs := scrapeStatuses(t, fixtureStatuses()...)
	got := map[string]float64{}
	n := 0
	var fam *dto.MetricFamily
	for _, mf := range mfs {
		if mf.GetName() == "mcpwatch_call_failures_total" {
			fam = mf
		}
	}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		n++
		if v := m.GetCounter().GetValue(); v != 0 {
			got[labels["server"]+"/"+labels["tool"]+"/"+labels["reason"]] = v
		}
	}
	if n != 3 || len(got) != 3 || got["reports/list_reports/is_error"] != 3 || got["slack/slack_list_channels/credential_rejected"] != 1 ||
		got["docs/resolve-library-id/upstream_unreachable"] != 1 {
		t.Errorf("%d series, nonzero %v", n, got)
	}
}

func TestFailuresByReason(t *testing.T) {
	statuses := fixtureStatuses()
	statuses = append(statuses, status.Server{
		Name: "unknown-reason", Probes: 7,
		// A reason probe forgot to list in probe.Reasons still counts; two
		// that are one label once cut share a series.
		Failures: map[probe.Reason]uint64{
			"brand_new": 4, probe.Reason(strings.Repeat("x", 70) + "a"): 1, probe.Reason(strings.Repeat("x", 70) + "b"): 2,
		},
	})
	mfs := scrapeStatuses(t, statuses...)
	cut := strings.Repeat("x", 64) + "…"

	tests := []struct {
		server  string
		nonzero map[string]float64
		series  int
	}{
		// A reason's series appears with its first failure: a server has
		// one per reason it has failed with, none before its first.
		{"github", map[string]float64{"timeout": 2}, 1},
		{"newcomer", map[string]float64{}, 0},
		{"reports", map[string]float64{}, 0},
		{"search", map[string]float64{"timeout": 3, "connection": 1}, 2},
		{"unknown-reason", map[string]float64{"brand_new": 4, cut: 3}, 2},
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
				t.Errorf("%d failure series, want %d (one per reason failed with)", series, tt.series)
			}
			if !mapsEqual(got, tt.nonzero) {
				t.Errorf("nonzero failures %v, want %v", got, tt.nonzero)
			}
		})
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
	st := status.Server{
		Name: "hostile", Last: hostile, LastOK: hostile, LastSuccess: base,
		Diff: lockstore.Diff{
			Locked:    true,
			Expected:  []string{long + "1", long + "2", "ok\xff"}, // a lock written from that server
			Missing:   []string{long + "2"},
			Forbidden: forbidden,
		},
	}
	mfs := scrapeStatuses(t, st)

	info := family(mfs, "mcpwatch_server_info").GetMetric()[0]
	for _, name := range []string{"server_name", "server_version", "protocol_version"} {
		v := label(info, name)
		// At most 64 bytes of the server's and the marker, each byte of
		// them a U+FFFD of 3 at worst.
		if len(v) > 3*64+len("…") || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\x1b") {
			t.Errorf("%s label %q (%d bytes): want valid UTF-8, no control characters, at most 64 bytes of the server's", name, v, len(v))
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
		if v := label(m, "tool"); len(v) > 128+len("…") || !utf8.ValidString(v) {
			t.Errorf("tool label of %d bytes, valid UTF-8 %v: want at most 128 and the marker, and valid", len(v), utf8.ValidString(v))
		}
	}
	// The two long locked names are one label once cut: one series, missing
	// because one of them is.
	missing := seriesOf(mfs, "hostile")
	cut := strings.Repeat("A", 128) + "…"
	if v, ok := missing["mcpwatch_tool_missing/"+cut]; !ok || v != 1 {
		t.Errorf("merged tool_missing series for the cut names = %v (present %v), want 1", v, ok)
	}
}

// Every byte the text format escapes survives the trip through the parser,
// in the server label (a config key), in tool names and in server-reported
// values: what Prometheus stores is exactly the cleaned value.
func TestLabelValuesRoundTrip(t *testing.T) {
	const quoted = `a "quoted" \ back\slash\\ \n not a newline {x="y"} ` + "\u00e9\u6f22"
	res := &probe.Result{
		OK: true, Transport: probe.TransportHTTP, Era: probe.EraModern,
		ProtocolVersion: `v"1"`, ServerName: `name with \ and "`, ServerVersion: "line\nbreak",
		Tools: tools(quoted, `rm -rf "/"`), Started: base,
	}
	st := status.Server{
		Name: `srv "one" \ two` + "\nthree", Last: res, LastOK: res, LastSuccess: base,
		Diff: lockstore.Diff{
			Locked: true, Expected: []string{quoted, `gone\"`}, Missing: []string{`gone\"`},
			Forbidden: []string{`rm -rf "/"`},
		},
	}
	mfs := scrapeStatuses(t, st)
	const server = `srv "one" \ two` + "\uFFFDthree" // a line feed is a control character: replaced, as before
	got := seriesOf(mfs, server)
	want := map[string]float64{
		"mcpwatch_tool_missing/" + quoted:    0,
		`mcpwatch_tool_missing/gone\"`:       1,
		`mcpwatch_tool_forbidden/rm -rf "/"`: 1,
		"mcpwatch_server_info/" + strings.Join([]string{"modern", `v"1"`, `name with \ and "`, "line\uFFFDbreak", "http"}, "/"): 1,
	}
	for key, v := range want {
		if g, ok := got[key]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v; got %v", key, g, ok, v, got)
		}
	}
	lint(t, mfs)
}

func TestRepeatedOrUnsortedNamesDoNotRepeatSeries(t *testing.T) {
	fixture := fixtureStatuses()
	statuses := []status.Server{fixture[4], fixture[0], fixture[0], fixture[2], fixture[4]}
	text := writeText(t, statuses...)
	checkLayout(t, text)
	mfs := parseText(t, text)
	if got := value(t, mfs, "mcpwatch_servers"); got != 3 {
		t.Errorf("mcpwatch_servers %v, want 3", got)
	}
	for _, mf := range mfs {
		keys := map[string]bool{}
		for _, m := range mf.GetMetric() {
			if k := labelKey(m); keys[k] {
				t.Errorf("%s{%s} twice", mf.GetName(), k)
			}
			keys[labelKey(m)] = true
		}
	}
	want := scrapeStatuses(t, fixture[0], fixture[2], fixture[4])
	if err := compareFamilies(mfs, want); err != nil {
		t.Error(err)
	}
}

// /probe must render exactly what /metrics has for the server: the same
// writer, so the same series, and nothing else.
func TestWriteServerMatchesWriteText(t *testing.T) {
	all := scrapeStatuses(t, fixtureStatuses()...)
	for _, st := range fixtureStatuses() {
		t.Run(st.Name, func(t *testing.T) {
			var b strings.Builder
			if err := metrics.WriteServerText(&b, st); err != nil {
				t.Fatal(err)
			}
			checkLayout(t, b.String())
			mfs := parseText(t, b.String())
			got, want := seriesOf(mfs, st.Name), seriesOf(all, st.Name)
			if !mapsEqual(got, want) {
				t.Errorf("/probe series differ from /metrics:\n got %v\nwant %v", got, want)
			}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					if label(m, "server") != st.Name {
						t.Errorf("%s series without server=%q: %v", mf.GetName(), st.Name, m)
					}
				}
			}
			lint(t, mfs)
		})
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errors.New("connection reset")
	}
	return len(p), nil
}

func TestWriteTextReturnsTheWriterError(t *testing.T) {
	err := metrics.WriteText(&failingWriter{after: 100_000}, fleet(100, 25))
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("WriteText into a failing writer = %v, want its error", err)
	}
}

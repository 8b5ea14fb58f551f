package metrics_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// parseText reads an exposition as Prometheus does, and returns its families
// normalized: families by name, each metric's labels by name, metrics by
// their labels. The text format leaves both orders free.
func parseText(t testing.TB, text string) []*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse the exposition: %v\n%s", err, text)
	}
	mfs := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		for _, m := range mf.GetMetric() {
			slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
		slices.SortFunc(mf.Metric, func(a, b *dto.Metric) int { return strings.Compare(labelKey(a), labelKey(b)) })
		mfs = append(mfs, mf)
	}
	slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return mfs
}

func labelKey(m *dto.Metric) string {
	var b strings.Builder
	for _, lp := range m.GetLabel() {
		fmt.Fprintf(&b, "%s=%q,", lp.GetName(), lp.GetValue())
	}
	return b.String()
}

// writeText is WriteText into a string.
func writeText(t testing.TB, statuses ...status.Server) string {
	t.Helper()
	var b strings.Builder
	if err := metrics.WriteText(&b, statuses); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	return b.String()
}

// scrapeStatuses is what Prometheus reads from WriteText over statuses.
func scrapeStatuses(t testing.TB, statuses ...status.Server) []*dto.MetricFamily {
	t.Helper()
	text := writeText(t, statuses...)
	checkLayout(t, text)
	return parseText(t, text)
}

// compareFamilies compares two normalized scrapes by their text, without
// the families in skip.
func compareFamilies(got, want []*dto.MetricFamily, skip ...string) error {
	encode := func(mfs []*dto.MetricFamily) []string {
		var b bytes.Buffer
		for _, mf := range mfs {
			if !slices.Contains(skip, mf.GetName()) {
				_, _ = expfmt.MetricFamilyToText(&b, mf)
			}
		}
		return strings.Split(b.String(), "\n")
	}
	g, w := encode(got), encode(want)
	if slices.Equal(g, w) {
		return nil
	}
	var diff strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&diff, "+ %s\n", l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&diff, "- %s\n", l)
		}
	}
	return fmt.Errorf("scrapes differ (+ got, - want; empty means an order or count difference):\n%s", diff.String())
}

// checkLayout checks what the parser lets pass: every family has one HELP
// and one TYPE line, in that order, before its samples; a family's samples
// are contiguous; the families are sorted by name within each part of the
// exposition (the per-server families, then mcpwatch's own registry).
func checkLayout(t testing.TB, text string) {
	t.Helper()
	seen := map[string]bool{}
	var current, typ string
	var order []string
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if seen[name] {
				t.Errorf("line %d: family %s appears a second time", i+1, name)
			}
			seen[name], current, typ = true, name, ""
			order = append(order, name)
		case strings.HasPrefix(line, "# TYPE "):
			name, kind, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			if name != current || typ != "" {
				t.Errorf("line %d: TYPE of %s not right after its HELP", i+1, name)
			}
			typ = kind
		default:
			name := line[:strings.IndexAny(line, "{ ")]
			if typ == "" || !sampleOf(name, current, typ) {
				t.Errorf("line %d: sample %s outside its family (in %s)", i+1, name, current)
			}
		}
	}
	// The per-server families come first, sorted; mcpwatch's own follow.
	own := ownNames()
	isOwn := func(name string) bool { return slices.Contains(own, name) }
	split := slices.IndexFunc(order, isOwn)
	if split < 0 {
		split = len(order)
	}
	if !slices.IsSorted(order[:split]) {
		t.Errorf("per-server families not sorted by name: %v", order[:split])
	}
	for _, name := range order[split:] {
		// The fleet's request histogram is one of mcpwatch's own, absent from
		// a fresh registry until a request is counted.
		if !isOwn(name) && name != metrics.OperationDurationName {
			t.Errorf("per-server family %s after mcpwatch's own families", name)
		}
	}
}

// ownNames are the families of mcpwatch's own registry.
func ownNames() []string {
	reg, d := metrics.NewRegistry()
	d.IssuerChecked("github", probe.IssuerAccepted) // a family that appears with its first series
	mfs, err := reg.Gather()
	if err != nil {
		panic(err) // a fresh registry of fixed metrics
	}
	names := make([]string, len(mfs))
	for i, mf := range mfs {
		names[i] = mf.GetName()
	}
	return names
}

func sampleOf(sample, family, typ string) bool {
	if sample == family {
		return true
	}
	switch typ {
	case "histogram":
		return sample == family+"_bucket" || sample == family+"_sum" || sample == family+"_count"
	case "summary":
		return sample == family+"_sum" || sample == family+"_count"
	}
	return false
}

// lint runs the naming lint of promtool check metrics over a scrape.
func lint(t testing.TB, mfs []*dto.MetricFamily) {
	t.Helper()
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// get requests path from h, with Accept-Encoding if given, and returns the
// response with its body read (and gunzipped when it says so).
func get(t testing.TB, h http.Handler, path, acceptEncoding string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(raw)
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

// seriesOf returns "family/label values..." => value for every series of a
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

// value reads the one series of an unlabelled gauge.
func value(t testing.TB, mfs []*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf := family(mfs, name)
	if mf == nil || len(mf.GetMetric()) != 1 {
		t.Fatalf("want one %s series, got %v", name, mf)
	}
	return mf.GetMetric()[0].GetGauge().GetValue()
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

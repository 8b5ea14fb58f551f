package metrics_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// prometheusAccept is the Accept header Prometheus 2.x scrapes with.
const prometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

const protobufAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"

func fetch(t *testing.T, h http.Handler, accept string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics with Accept %q = %d", accept, rec.Code)
	}
	return rec.Result(), rec.Body.Bytes()
}

// normalized is an exposition with every sample's value written one way
// ("1" and "1.0" are the same number) and the samples of each family
// sorted (neither format orders them), for comparing two writers.
func normalized(text string) string {
	var b strings.Builder
	var samples []string
	flush := func() {
		slices.Sort(samples)
		for _, l := range samples {
			b.WriteString(l + "\n")
		}
		samples = samples[:0]
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			flush()
			b.WriteString(line + "\n")
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil && !math.IsNaN(v) {
				line = line[:i+1] + strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		samples = append(samples, line)
	}
	flush()
	return b.String()
}

// Negotiated through expfmt: OpenMetrics for Prometheus (what expfmt's own
// OpenMetrics encoder writes for the same families, # EOF included),
// delimited protobuf on request (the same families as the text), and the
// text format by default.
func TestHandlerNegotiatesFormats(t *testing.T) {
	own := prometheus.NewRegistry() // fixed, so two scrapes compare
	own.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "mcpwatch_test_events_total", Help: "A counter."}))
	h := metrics.NewHandler(newSource(fixtureStatuses()...), own, nil)
	_, textBody := fetch(t, h, "")
	text := string(textBody)

	resp, om := fetch(t, h, prometheusAccept)
	if vary := resp.Header.Values("Vary"); !slices.Contains(vary, "Accept") || !slices.Contains(vary, "Accept-Encoding") {
		t.Errorf("Vary %q, want Accept and Accept-Encoding", vary)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
		t.Errorf("Content-Type for Prometheus = %q, want OpenMetrics 1.0.0", ct)
	}
	// What expfmt writes for the families of the text, in their order.
	parsed := map[string]*dto.MetricFamily{}
	for _, mf := range parseText(t, text) {
		parsed[mf.GetName()] = mf
	}
	var want bytes.Buffer
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(name, " ")
			if _, err := expfmt.MetricFamilyToOpenMetrics(&want, parsed[name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, _ = expfmt.FinalizeOpenMetrics(&want)
	if got, exp := normalized(string(om)), normalized(want.String()); got != exp {
		t.Errorf("OpenMetrics differs from expfmt's encoding of the same families:\n%s", firstDiff(got, exp))
	}
	for _, must := range []string{"# TYPE mcpwatch_probes counter\n", "\nmcpwatch_probes_total{", "# TYPE mcpwatch_test_events counter\n"} {
		if !strings.Contains(string(om), must) {
			t.Errorf("OpenMetrics lacks %q", must)
		}
	}
	if !strings.HasSuffix(string(om), "\n# EOF\n") {
		t.Errorf("OpenMetrics does not end with # EOF")
	}

	resp, pb := fetch(t, h, protobufAccept)
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() != expfmt.TypeProtoDelim {
		t.Fatalf("Content-Type for protobuf = %q", resp.Header.Get("Content-Type"))
	}
	dec := expfmt.NewDecoder(bytes.NewReader(pb), format)
	var got []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode protobuf: %v", err)
		}
		got = append(got, mf)
	}
	for _, mf := range got { // normalized as parseText does
		for _, m := range mf.GetMetric() {
			slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
		slices.SortFunc(mf.Metric, func(a, b *dto.Metric) int { return strings.Compare(labelKey(a), labelKey(b)) })
	}
	if err := compareFamilies(got, parseText(t, text)); err != nil {
		t.Errorf("protobuf differs from the text: %v", err)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + al[i] + "\n want " + bl[i]
		}
	}
	return "lengths differ: " + strconv.Itoa(len(al)) + " and " + strconv.Itoa(len(bl)) + " lines"
}

// BenchmarkScrape1000x25OpenMetrics is the scrape as Prometheus 2.x asks
// for it: OpenMetrics, gzipped.
func BenchmarkScrape1000x25OpenMetrics(b *testing.B) {
	h, _, _ := newHandler(newSource(fleet(1000, 25)...))
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", prometheusAccept)
	req.Header.Set("Accept-Encoding", "gzip")
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("scrape: %d", rec.Code)
		}
	}
	b.ReportAllocs()
}

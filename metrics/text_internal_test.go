package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// Values are spelled as the client library spells them, read from the
// library itself.
func TestFloatsAsPrometheusWritesThem(t *testing.T) {
	for _, v := range []float64{
		0, 1, -1, 0.5, 0.015, 1e-7, 30, 120, 1e6, 123456789, 1.7776368004e+09, 1e21, 1e22,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(),
	} {
		var lib strings.Builder
		mf := &dto.MetricFamily{
			Name: proto.String("x"), Help: proto.String("h"), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(v)}}},
		}
		if _, err := expfmt.MetricFamilyToText(&lib, mf); err != nil {
			t.Fatal(err)
		}
		_, sample, _ := strings.Cut(lib.String(), "\nx ")
		want := strings.TrimSuffix(sample, "\n")
		if got := string(appendFloat(nil, v)); got != want {
			t.Errorf("appendFloat(%v) = %q, the client library writes %q", v, got, want)
		}
	}
}

// The text of mcpwatch's own registry follows the per-server families in
// one exposition: a name in both would be a repeated family, which fails
// the whole scrape.
func TestFamilyNamesDoNotCollide(t *testing.T) {
	rendered := newDescs().names()
	if !slices.IsSorted(rendered) || len(slices.Compact(slices.Clone(rendered))) != len(rendered) {
		t.Errorf("per-server family names not sorted and unique: %v", rendered)
	}
	for _, mf := range ownFamilies() {
		if slices.Contains(rendered, mf.GetName()) {
			t.Errorf("%s is both a per-server family and one of mcpwatch's own", mf.GetName())
		}
	}
}

func TestHelpEscaped(t *testing.T) {
	if got, want := escapeHelp("a\\b\nc\"d"), `a\\b\nc"d`; got != want {
		t.Errorf("escapeHelp = %q, want %q", got, want)
	}
	for _, f := range newDescs().all {
		if !strings.HasPrefix(f.header, "# HELP "+f.name+" ") || !strings.HasSuffix(f.header, "\n# TYPE "+f.name+" "+f.typ+"\n") {
			t.Errorf("%s: header %q", f.name, f.header)
		}
		if f.typ != typeGauge && f.typ != typeCounter && (f.typ != typeHistogram || len(f.buckets) == 0) {
			t.Errorf("%s: type %q", f.name, f.typ)
		}
	}
}

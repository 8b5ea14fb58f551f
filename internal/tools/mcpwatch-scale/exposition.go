package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exposition is what the harness reads from one /metrics body.
type exposition struct {
	probes        float64            // sum of mcpwatch_probes_total
	servers       int                // series of mcpwatch_probes_total: servers configured
	probedServers int                // of which probed at least once
	failures      map[string]float64 // mcpwatch_probe_failures_total summed by reason
	skipped       map[string]float64 // mcpwatch_probes_skipped_total by reason (empty before mcpwatch had it)
	lag           histogram          // mcpwatch_schedule_lag_seconds
	goroutines    float64
}

// histogram is a cumulative Prometheus histogram.
type histogram struct {
	bounds []float64 // upper bounds, ascending, +Inf last
	counts []float64 // cumulative counts
	count  float64
	sum    float64
}

// readFamilies are the families parseExposition reads; the others (a
// hundred thousand servers' gauges, two million lines) are left out before
// parsing, which would otherwise cost the harness gigabytes.
var readFamilies = []string{
	"mcpwatch_probes_total", "mcpwatch_probe_failures_total", "mcpwatch_probes_skipped_total",
	"mcpwatch_schedule_lag_seconds", "go_goroutines",
}

// keepFamilies copies the lines of body that belong to readFamilies: their
// HELP and TYPE lines and their samples (a histogram's _bucket, _sum and
// _count included).
func keepFamilies(body []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(body) {
		name := line
		if rest, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name = rest
		} else if rest, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
			name = rest
		}
		for _, f := range readFamilies {
			if rest, ok := bytes.CutPrefix(name, []byte(f)); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '{' || rest[0] == '_') {
				if rest[0] == '_' && !bytes.HasPrefix(rest, []byte("_bucket")) && !bytes.HasPrefix(rest, []byte("_sum")) && !bytes.HasPrefix(rest, []byte("_count")) {
					continue
				}
				out.Write(line)
				break
			}
		}
	}
	return out.Bytes()
}

func parseExposition(r io.Reader) (exposition, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return exposition{}, fmt.Errorf("read /metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(keepFamilies(raw)))
	if err != nil {
		return exposition{}, fmt.Errorf("parse /metrics: %w", err)
	}
	e := exposition{failures: map[string]float64{}, skipped: map[string]float64{}}
	if mf := families["mcpwatch_probes_total"]; mf != nil {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue()
			e.probes += v
			e.servers++
			if v > 0 {
				e.probedServers++
			}
		}
	}
	if mf := families["mcpwatch_probe_failures_total"]; mf != nil {
		for _, m := range mf.GetMetric() {
			e.failures[label(m, "reason")] += m.GetCounter().GetValue()
		}
	}
	if mf := families["mcpwatch_probes_skipped_total"]; mf != nil {
		for _, m := range mf.GetMetric() {
			e.skipped[label(m, "reason")] += m.GetCounter().GetValue()
		}
	}
	if mf := families["mcpwatch_schedule_lag_seconds"]; mf != nil && len(mf.GetMetric()) == 1 {
		h := mf.GetMetric()[0].GetHistogram()
		for _, b := range h.GetBucket() {
			e.lag.bounds = append(e.lag.bounds, b.GetUpperBound())
			e.lag.counts = append(e.lag.counts, float64(b.GetCumulativeCount()))
		}
		// The text format lists the +Inf bucket; a client may leave it out.
		if n := len(e.lag.bounds); n == 0 || !math.IsInf(e.lag.bounds[n-1], 1) {
			e.lag.bounds = append(e.lag.bounds, math.Inf(1))
			e.lag.counts = append(e.lag.counts, float64(h.GetSampleCount()))
		}
		e.lag.count, e.lag.sum = float64(h.GetSampleCount()), h.GetSampleSum()
	} else {
		return e, fmt.Errorf("/metrics has no mcpwatch_schedule_lag_seconds histogram")
	}
	if mf := families["go_goroutines"]; mf != nil && len(mf.GetMetric()) == 1 {
		e.goroutines = mf.GetMetric()[0].GetGauge().GetValue()
	}
	return e, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// minus is the histogram of the observations made between two snapshots.
func (h histogram) minus(earlier histogram) histogram {
	d := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts)), count: h.count - earlier.count, sum: h.sum - earlier.sum}
	for i := range h.counts {
		d.counts[i] = h.counts[i]
		if i < len(earlier.counts) {
			d.counts[i] -= earlier.counts[i]
		}
	}
	return d
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile
// does: linear within the bucket that holds the rank. A rank in the +Inf
// bucket returns the largest finite bound and overflow true.
func (h histogram) quantile(q float64) (v float64, overflow bool) {
	if h.count <= 0 || len(h.bounds) == 0 {
		return math.NaN(), false
	}
	rank := q * h.count
	i := sort.Search(len(h.counts), func(i int) bool { return h.counts[i] >= rank })
	if i >= len(h.bounds) {
		i = len(h.bounds) - 1
	}
	if math.IsInf(h.bounds[i], 1) {
		if i == 0 {
			return math.NaN(), true
		}
		return h.bounds[i-1], true
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.counts[i-1]
	}
	inBucket := h.counts[i] - below
	if inBucket <= 0 {
		return h.bounds[i], false
	}
	return lower + (h.bounds[i]-lower)*(rank-below)/inBucket, false
}

// maxBound is the upper bound of the highest bucket that gained an
// observation: the worst lag seen, to a bucket.
func (h histogram) maxBound() float64 {
	for i := len(h.counts) - 1; i >= 0; i-- {
		below := 0.0
		if i > 0 {
			below = h.counts[i-1]
		}
		if h.counts[i]-below > 0 {
			return h.bounds[i]
		}
	}
	return 0
}

package metrics_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Each request lands in the first bucket whose bound it does not exceed
// (a bound is inclusive; beyond the last, the +Inf bucket), under its
// method, tool, outcome, version and transport; a published slice is never
// written.
func TestRecordOperations(t *testing.T) {
	res := &probe.Result{Transport: probe.TransportHTTP, ProtocolVersion: "2026-07-28", Operations: []probe.Operation{
		{Method: probe.MethodListTools, Duration: 10 * time.Millisecond}, // on the first bound
		{Method: probe.MethodListTools, Duration: 11 * time.Millisecond},
		{Method: probe.MethodCallTool, Tool: "echo", Duration: 400 * time.Second, ToolError: true}, // beyond every bound
		{Method: probe.MethodCallTool, Tool: "echo", Duration: time.Second, Error: probe.ReasonTimeout},
	}}
	first := metrics.RecordOperations(nil, res)
	want := []string{
		"tools/call echo timeout 2026-07-28 tcp: 1 in bucket 6",
		"tools/call echo tool_error 2026-07-28 tcp: 1 in bucket 14",
		"tools/list   2026-07-28 tcp: 1 in bucket 0, 1 in bucket 1",
	}
	if got := describe(first); !slices.Equal(got, want) {
		t.Errorf("series\n%q, want\n%q", got, want)
	}

	stdio := &probe.Result{Transport: probe.TransportStdio, ProtocolVersion: "2026-07-28", Operations: res.Operations[:1]}
	second := metrics.RecordOperations(first, res)
	second = metrics.RecordOperations(second, stdio)
	if got := describe(first); !slices.Equal(got, want) {
		t.Errorf("the first slice was written: %q", got)
	}
	if got := describe(second); len(got) != 4 || got[2] != "tools/list   2026-07-28 pipe: 1 in bucket 0" ||
		got[3] != "tools/list   2026-07-28 tcp: 2 in bucket 0, 2 in bucket 1" {
		t.Errorf("after a second probe and one over stdio: %q", got)
	}
	if s := second[3]; s.Count != 4 || s.Sum < 0.0419 || s.Sum > 0.0421 {
		t.Errorf("count %d, sum %v; want 4 and 0.042", s.Count, s.Sum)
	}
}

// A server answering with another protocol version at every probe cannot
// grow its series without bound.
func TestRecordOperationsBounded(t *testing.T) {
	var ops []status.OperationSeries
	for i := range 1000 {
		ops = metrics.RecordOperations(ops, &probe.Result{ProtocolVersion: fmt.Sprint(i),
			Operations: []probe.Operation{{Method: probe.MethodListTools, Duration: time.Millisecond}}})
	}
	if len(ops) != 64 {
		t.Errorf("%d series after 1,000 versions, want the bound, 64", len(ops))
	}
}

func describe(ops []status.OperationSeries) []string {
	var out []string
	for _, s := range ops {
		d := fmt.Sprintf("%s %s %s %s %s:", s.Method, s.Tool, s.ErrorType, s.ProtocolVersion, s.Transport)
		sep := " "
		for i, n := range s.Counts {
			if n > 0 {
				d += fmt.Sprintf("%s%d in bucket %d", sep, n, i)
				sep = ", "
			}
		}
		out = append(out, d)
	}
	return out
}

// By default /metrics has one histogram of requests for the fleet, by
// method, outcome and transport: no server, tool or protocol version
// label, none of the statuses' per-server series, and the buckets a
// dashboard's sum by (le, mcp_method_name) reads. /probe keeps the server's
// own.
func TestHandlerFleetOperations(t *testing.T) {
	statuses := fixtureStatuses()
	h, d, log := newHandler(newSource(statuses...))
	d.ObserveOperations(&probe.Result{Transport: probe.TransportHTTP, ProtocolVersion: "2026-07-28", Operations: []probe.Operation{
		{Method: probe.MethodInitialize, Duration: 15 * time.Millisecond},
		{Method: probe.MethodListTools, Duration: 30 * time.Millisecond},
		{Method: probe.MethodCallTool, Tool: "get_me", Duration: 40 * time.Millisecond, ToolError: true},
	}})
	d.ObserveOperations(&probe.Result{Transport: probe.TransportStdio, ProtocolVersion: "2025-06-18", Operations: []probe.Operation{
		{Method: probe.MethodListTools, Duration: 10 * time.Millisecond},
		{Method: probe.MethodListTools, Duration: 10 * time.Second, Error: probe.ReasonTimeout},
	}})
	mfs := scrape(t, h)
	mf := family(mfs, metrics.OperationDurationName)
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s missing or not a histogram: %v", metrics.OperationDurationName, mf)
	}
	var got []string
	for _, m := range mf.GetMetric() {
		var labels []string
		for _, lp := range m.GetLabel() {
			labels = append(labels, lp.GetName()+"="+lp.GetValue())
		}
		h := m.GetHistogram()
		if n := len(h.GetBucket()); n != len(metrics.OperationBuckets)+1 {
			t.Errorf("%v: %d classic buckets, want %d and +Inf", labels, n, len(metrics.OperationBuckets))
		}
		got = append(got, fmt.Sprintf("%s: %d", strings.Join(labels, ","), h.GetSampleCount()))
	}
	want := []string{
		"error_type=,mcp_method_name=initialize,network_transport=tcp: 1",
		"error_type=,mcp_method_name=tools/list,network_transport=pipe: 1",
		"error_type=,mcp_method_name=tools/list,network_transport=tcp: 1",
		"error_type=timeout,mcp_method_name=tools/list,network_transport=pipe: 1",
		"error_type=tool_error,mcp_method_name=tools/call,network_transport=tcp: 1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("series\n%q, want\n%q", got, want)
	}
	// Protobuf carries native buckets besides the classic ones, for a
	// Prometheus with native histograms on; OpenMetrics the classic ones.
	_, raw := fetch(t, h, protobufAccept)
	var native bool
	dec := expfmt.NewDecoder(bytes.NewReader(raw), expfmt.NewFormat(expfmt.TypeProtoDelim))
	for {
		var pmf dto.MetricFamily
		if err := dec.Decode(&pmf); err != nil {
			break
		}
		if pmf.GetName() == metrics.OperationDurationName {
			for _, m := range pmf.GetMetric() {
				native = native || m.GetHistogram().GetSchema() != 0 || len(m.GetHistogram().GetPositiveSpan()) > 0
			}
		}
	}
	if !native {
		t.Errorf("no native buckets in the protobuf exposition of %s", metrics.OperationDurationName)
	}
	if _, om := fetch(t, h, prometheusAccept); !bytes.Contains(om, []byte(metrics.OperationDurationName+`_bucket{error_type="",mcp_method_name="tools/list",network_transport="pipe",le="0.01"} 1`)) {
		t.Errorf("OpenMetrics lacks the classic buckets of the fleet's histogram")
	}
	if log.String() != "" {
		t.Errorf("logged: %s", log)
	}

	// The server's own histogram is on /probe, as WriteServerText writes it.
	for _, st := range statuses {
		if len(st.Operations) == 0 {
			continue
		}
		var b strings.Builder
		if err := metrics.WriteServerText(&b, st); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), metrics.OperationDurationName+`_count{`) {
			t.Errorf("/probe of %s lacks its request histogram", st.Name)
		}
	}
}

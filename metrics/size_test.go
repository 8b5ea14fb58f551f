package metrics_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// fleetRequests are the requests of one probe of a fleet server over HTTP
// (initialize and one tools/list page), with calls canary tools/call
// requests after them.
func fleetRequests(calls int) *probe.Result {
	res := &probe.Result{Transport: probe.TransportHTTP, ProtocolVersion: "2025-06-18", Operations: []probe.Operation{
		{Method: probe.MethodInitialize, Duration: 3 * time.Millisecond},
		{Method: probe.MethodListTools, Duration: 4 * time.Millisecond},
	}}
	for i := range calls {
		res.Operations = append(res.Operations, probe.Operation{Method: probe.MethodCallTool, Tool: fmt.Sprintf("tool_%02d", i), Duration: 5 * time.Millisecond})
	}
	return res
}

// scrapeBytes is the size of an uncompressed /metrics of fleet(n, k), each
// server's requests res (none if nil) recorded as the daemon records them:
// into its status always, and into the fleet's histogram unless perServer.
func scrapeBytes(t testing.TB, n, k int, res *probe.Result, perServer bool) int {
	statuses := fleet(n, k)
	var opts []metrics.HandlerOption
	if perServer {
		opts = append(opts, metrics.PerServerOperations())
	}
	src := newSource(statuses...)
	h, d, _ := newHandler(src, opts...)
	for i := range statuses {
		if res == nil {
			break
		}
		statuses[i].Operations = metrics.RecordOperations(nil, res)
		if !perServer {
			d.ObserveOperations(res)
		}
	}
	resp, body := get(t, h, "/metrics", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics = %d", resp.StatusCode)
	}
	return len(body)
}

// The request histogram does not grow /metrics with the fleet by default:
// 1,000 servers whose requests are counted cost at most 10 bytes a server
// more than 1,000 whose are not (the fleet's histogram is a few series for
// all of them), where the per-server form costs kilobytes a server.
//
// And a server's own series fit the budget of /metrics at 10,000 servers,
// 25 MB: 2.5 kB a server of 21 locked tools, 2.8 kB for this fleet's 25
// (tool_missing's 4 more lines). With every failure reason exported from 0
// a server took 3.9 kB.
func TestScrapeBytesPerServer(t *testing.T) {
	const n, k = 1000, 25
	const budget = 2800 // bytes a server, requests not counted
	without := scrapeBytes(t, n, k, nil, false)
	if without > budget*n {
		t.Errorf("/metrics of %d servers with %d locked tools each is %d B, %d B a server: want at most %d B a server",
			n, k, without, without/n, budget)
	}
	for _, calls := range []int{0, 2} {
		fleetForm := scrapeBytes(t, n, k, fleetRequests(calls), false)
		perServer := scrapeBytes(t, n, k, fleetRequests(calls), true)
		t.Logf("%d canary tools: %d B a server by default, %d B with per-server histograms (%d B without requests)",
			calls, fleetForm/n, perServer/n, without/n)
		if grown := fleetForm - without; grown > 10*n {
			t.Errorf("%d canary tools: the request histogram adds %d bytes to /metrics of %d servers, want at most %d",
				calls, grown, n, 10*n)
		}
		if perServer-without < 1000*n*(2+calls) {
			t.Errorf("per-server histograms add %d bytes for %d servers: the option does not render them", perServer-without, n)
		}
	}
}

// BenchmarkOperationForms measures, per 1,000 servers, the bytes each
// form of the request histogram adds to /metrics for the servers' requests
// (initialize, tools/list, and two canary tools/call): the per-server
// classic histogram in text, the same as native histograms in delimited
// protobuf (what a Prometheus with native histograms on negotiates), and
// the fleet's histogram by method.
func BenchmarkOperationForms(b *testing.B) {
	const n, k, calls = 1000, 25, 2
	b.ReportAllocs()
	for b.Loop() {
		base := scrapeBytes(b, n, k, nil, false)
		fleetForm := scrapeBytes(b, n, k, fleetRequests(calls), false) - base
		perServer := scrapeBytes(b, n, k, fleetRequests(calls), true) - base
		b.ReportMetric(float64(perServer), "classic-per-server-B/1000")
		b.ReportMetric(float64(fleetForm), "fleet-B/1000")
		b.ReportMetric(float64(nativePerServer(b, n, calls)), "native-proto-per-server-B/1000")
	}
}

// nativePerServer is the delimited protobuf of n servers' requests as
// native histograms only, labelled as the per-server form is.
func nativePerServer(b *testing.B, n, calls int) int {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: metrics.OperationDurationName, Help: "Native.", NativeHistogramBucketFactor: 1.1,
	}, []string{"server", "mcp_method_name", "gen_ai_tool_name", "mcp_protocol_version", "network_transport"})
	reg.MustRegister(h)
	res := fleetRequests(calls)
	for i := range n {
		for _, op := range res.Operations {
			// A spread of durations, as a server's requests have over time.
			for j := range 20 {
				h.WithLabelValues(fmt.Sprintf("server-%04d", i), op.Method, op.Tool, res.ProtocolVersion, "tcp").
					Observe(op.Duration.Seconds() * (1 + float64(j)/10))
			}
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Len()
}

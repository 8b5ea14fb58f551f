package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The duration histogram of the requests mcpwatch makes to a server, named
// after OpenTelemetry's MCP semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/#metrics): the
// metric mcp.client.operation.duration and its attributes mcp.method.name,
// gen_ai.tool.name, error.type, mcp.protocol.version and network.transport,
// spelt as Prometheus spells OpenTelemetry names (dots to underscores, the
// unit as a suffix). These constants are the one place they are written: a
// rename is one edit here.
const (
	// OperationDurationName is the family's name.
	OperationDurationName    = "mcp_client_operation_duration_seconds"
	operationMethodLabel     = "mcp_method_name"
	operationToolLabel       = "gen_ai_tool_name"
	operationErrorLabel      = "error_type"
	operationVersionLabel    = "mcp_protocol_version"
	operationTransportLabel  = "network_transport"
	operationDurationHelpTxt = "Duration of each request mcpwatch sent to the server, from sending it to its answer or failure: server/discover, initialize, every tools/list page and every canary tools/call (each attempt), by method, tool (tools/call only), error_type (the probe's failure reason, rpc_error for a JSON-RPC error, tool_error for a call answered isError: true; empty when answered), the session's protocol version and network_transport (pipe for stdio, tcp for HTTP). OpenTelemetry's mcp.client.operation.duration, with its recommended buckets. Counted since the server was added."
)

// OperationBuckets are the upper bounds of the histogram's buckets, in
// seconds: those the OpenTelemetry MCP semantic conventions recommend for
// mcp.client.operation.duration.
var OperationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Values of error_type and network_transport that are not the probe's own.
const (
	operationToolError     = "tool_error" // a tools/call answered with isError: true
	operationTransportPipe = "pipe"       // stdio, as OpenTelemetry names it
	operationTransportTCP  = "tcp"        // streamable HTTP and HTTP+SSE
)

// maxOperationSeries bounds a server's histograms: the protocol version is
// the server's word, and a server answering with a new one at every probe
// must not grow the exposition without end. A request of a kind beyond the
// bound is not counted.
const maxOperationSeries = 64

// RecordOperations returns prev with the requests of res added, as a new
// slice: prev and its series are never written, so a published status
// stays as it was. prev stays sorted by its labels.
func RecordOperations(prev []status.OperationSeries, res *probe.Result) []status.OperationSeries {
	if len(res.Operations) == 0 {
		return prev
	}
	out := slices.Clone(prev)
	version := labelValue(res.ProtocolVersion, maxInfoLabelBytes)
	transport := operationTransport(res)
	copied := make([]bool, len(out)) // a series already copied by this call may be written
	for _, op := range res.Operations {
		key := status.OperationSeries{
			Method:          labelValue(op.Method, maxInfoLabelBytes),
			Tool:            labelValue(op.Tool, maxToolLabelBytes),
			ErrorType:       operationErrorType(op),
			ProtocolVersion: version,
			Transport:       transport,
		}
		i, found := slices.BinarySearchFunc(out, key, compareOperationLabels)
		if !found {
			if len(out) >= maxOperationSeries {
				continue
			}
			key.Counts = make([]uint64, len(OperationBuckets)+1)
			out = slices.Insert(out, i, key)
			copied = slices.Insert(copied, i, true)
		} else if !copied[i] {
			out[i].Counts = slices.Clone(out[i].Counts)
			copied[i] = true
		}
		s := &out[i]
		seconds := op.Duration.Seconds()
		b, _ := slices.BinarySearch(OperationBuckets, seconds) // the first bound >= seconds
		s.Counts[b]++
		s.Count++
		s.Sum += seconds
	}
	return out
}

// operationTransport is the network_transport of res's requests.
func operationTransport(res *probe.Result) string {
	if res.Transport == probe.TransportStdio {
		return operationTransportPipe
	}
	return operationTransportTCP
}

// operationErrorType is the error_type of op: the probe's reason,
// tool_error for a call answered isError: true, empty when answered.
func operationErrorType(op probe.Operation) string {
	if op.Error == "" && op.ToolError {
		return operationToolError
	}
	return labelValue(string(op.Error), maxInfoLabelBytes)
}

// compareOperationLabels orders series by their labels.
func compareOperationLabels(a, b status.OperationSeries) int {
	return cmp.Or(
		cmp.Compare(a.Method, b.Method),
		cmp.Compare(a.Tool, b.Tool),
		cmp.Compare(a.ErrorType, b.ErrorType),
		cmp.Compare(a.ProtocolVersion, b.ProtocolVersion),
		cmp.Compare(a.Transport, b.Transport),
	)
}

// renderOperations writes the server's histograms, with the label values in
// the order newDescs gives the family's labels.
func renderOperations(t *TextWriter, st *status.Server) {
	for i := range st.Operations {
		s := &st.Operations[i]
		t.histogram(s.Counts, s.Count, s.Sum, s.Method, s.Tool, s.ErrorType, s.ProtocolVersion, s.Transport)
	}
}

// The fleet's histogram: the default form of the family on /metrics. The
// requests of every server are counted in one histogram by method, outcome
// and transport, with no server, tool or protocol version label: a
// handful of series for the whole fleet, where the per-server form has
// 17 lines for each server, method and tool (91 MB a scrape at 10,000
// servers). Its labels are values of mcpwatch's code (probe methods and
// reasons), never a server's words, so the set stays bounded. Latency per
// server stays in the gauges of the last probe and call
// (mcpwatch_probe_phase_duration_seconds, mcpwatch_call_duration_seconds),
// and the per-server histogram on /probe and on request
// (PerServerOperations).
const operationFleetHelpTxt = "Duration of each request mcpwatch sent to its servers, all servers together, from sending it to its answer or failure: server/discover, initialize, every tools/list page and every canary tools/call (each attempt), by method, error_type (the probe's failure reason, rpc_error for a JSON-RPC error, tool_error for a call answered isError: true; empty when answered) and network_transport (pipe for stdio, tcp for HTTP). OpenTelemetry's mcp.client.operation.duration, with its recommended buckets (and native buckets in the protobuf exposition). Counted since mcpwatch started; per server (with gen_ai_tool_name and mcp_protocol_version) with --metrics.per-server-histograms, and always on /probe."

// newFleetOperations is the fleet's histogram, registered by NewDaemon. It
// has classic buckets for the text formats and native ones for a
// Prometheus that negotiates protobuf with native histograms on.
func newFleetOperations() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                            OperationDurationName,
		Help:                            operationFleetHelpTxt,
		Buckets:                         OperationBuckets,
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}, []string{operationMethodLabel, operationErrorLabel, operationTransportLabel})
}

// ObserveOperations counts the requests of res in the fleet's histogram.
// The daemon calls it for every recorded probe unless the histogram is
// rendered per server (PerServerOperations): the two forms share a name,
// and only one may be exported.
func (d *Daemon) ObserveOperations(res *probe.Result) {
	if len(res.Operations) == 0 {
		return
	}
	transport := operationTransport(res)
	for _, op := range res.Operations {
		d.operations.WithLabelValues(labelValue(op.Method, maxInfoLabelBytes), operationErrorType(op), transport).
			Observe(op.Duration.Seconds())
	}
}

package metrics

import (
	"cmp"
	"slices"

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
	transport := operationTransportTCP
	if res.Transport == probe.TransportStdio {
		transport = operationTransportPipe
	}
	copied := make([]bool, len(out)) // a series already copied by this call may be written
	for _, op := range res.Operations {
		key := status.OperationSeries{
			Method:          labelValue(op.Method, maxInfoLabelBytes),
			Tool:            labelValue(op.Tool, maxToolLabelBytes),
			ErrorType:       labelValue(string(op.Error), maxInfoLabelBytes),
			ProtocolVersion: version,
			Transport:       transport,
		}
		if op.Error == "" && op.ToolError {
			key.ErrorType = operationToolError
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

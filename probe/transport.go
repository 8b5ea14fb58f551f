package probe

import "strings"

// Transport is how a server is reached: the one vocabulary of transports.
// Every source of a server (mcpwatch.yml, a client config's "type", an
// mcp-probe config, a registry entry, the CLI's --transport) reads its
// word with ParseTransport, and a table of transports (the dialers) is
// keyed by these constants: a new transport is a constant and its
// spellings here, and a dialer.
type Transport string

const (
	TransportStdio Transport = "stdio" // a process mcpwatch spawns
	TransportHTTP  Transport = "http"  // streamable HTTP (2025-03-26 and later)
	TransportSSE   Transport = "sse"   // legacy HTTP+SSE (2024-11-05)
	// TransportAuto tries streamable HTTP first and falls back to legacy
	// SSE by the spec's rule (a 400, 404 or 405 without a modern error body).
	TransportAuto Transport = "auto"
)

// transportSpellings are the words each source writes for a transport,
// lower-cased: client configs and the MCP registry spell streamable HTTP
// several ways, and each source accepts every spelling.
var transportSpellings = map[string]Transport{
	"stdio":           TransportStdio,
	"auto":            TransportAuto,
	"http":            TransportHTTP,
	"streamable-http": TransportHTTP,
	"streamable_http": TransportHTTP,
	"streamablehttp":  TransportHTTP,
	"streamable":      TransportHTTP,
	"sse":             TransportSSE,
}

// ParseTransport reads a transport as any source writes it, case ignored.
func ParseTransport(s string) (Transport, bool) {
	t, ok := transportSpellings[strings.ToLower(s)]
	return t, ok
}

// Remote reports whether t reaches a server at a URL (auto, http, sse):
// whether its entry in the dialer table runs no command.
func (t Transport) Remote() bool {
	d, ok := dialers[t]
	return ok && !d.command
}

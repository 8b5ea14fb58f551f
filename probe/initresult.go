package probe

import (
	"encoding/json"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// initializeResult is what mcpwatch reads of an initialize result.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Capabilities    capabilities    `json:"capabilities"`
}

// maxVersionBytes bounds a protocol version: it goes back in every
// MCP-Protocol-Version header, and into results and metrics.
const maxVersionBytes = 64

// readInitialize is the one check of an initialize result, for the probe
// and the change listener alike: a JSON object naming a protocolVersion of
// at most 64 visible ASCII characters. The listener accepted one over 64
// bytes or with control characters that the probe refused.
func readInitialize(raw json.RawMessage) (initializeResult, error) {
	var r initializeResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, failf(ReasonProtocol, "initialize: the result is not an initialize result: %v", err)
	}
	switch {
	case r.ProtocolVersion == "":
		return r, failf(ReasonProtocol, "initialize: the result names no protocolVersion")
	case len(r.ProtocolVersion) > maxVersionBytes || !visibleASCII(r.ProtocolVersion):
		return r, failf(ReasonProtocol, "initialize: the server chose protocol version %q, which is not a version string", sanitize.Truncate(r.ProtocolVersion, 40))
	}
	return r, nil
}

package probetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JSON-RPC error codes the test servers answer with.
const (
	codeParseError         = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternalError      = -32603
	codeNoSession          = -32000 // TypeScript SDK: "Bad Request: No valid session ID provided"
	codeSessionNotFound    = -32001 // TypeScript SDK: "Session not found"
	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
)

// Keys of the modern per-request _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// inMessage is a JSON-RPC message from the client, of any kind.
type inMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

func (m *inMessage) hasID() bool          { return len(m.ID) > 0 && string(m.ID) != "null" }
func (m *inMessage) isRequest() bool      { return m.Method != "" && m.hasID() }
func (m *inMessage) isNotification() bool { return m.Method != "" && !m.hasID() }
func (m *inMessage) isResponse() bool     { return m.Method == "" && m.hasID() }

// params decodes the params object leniently: a missing or malformed one is
// an empty map, and the checks that need a field report it missing.
func (m *inMessage) params() map[string]any {
	var p map[string]any
	if len(m.Params) > 0 {
		_ = json.Unmarshal(m.Params, &p)
	}
	if p == nil {
		p = map[string]any{}
	}
	return p
}

// meta returns params._meta, or nil.
func (m *inMessage) meta() map[string]any {
	meta, _ := m.params()["_meta"].(map[string]any)
	return meta
}

// metaVersion returns the modern protocol version the request carries, or "".
func (m *inMessage) metaVersion() string {
	v, _ := m.meta()[metaProtocolVersion].(string)
	return v
}

// parseMessage decodes one JSON-RPC message. A batch, a non-object or a
// message of no known kind is an error.
func parseMessage(b []byte) (*inMessage, *rpcError) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return nil, &rpcError{Code: codeInvalidRequest, Message: "batches are not supported"}
	}
	var m inMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &rpcError{Code: codeParseError, Message: "Parse error"}
	}
	if m.JSONRPC != "2.0" || !(m.isRequest() || m.isNotification() || m.isResponse()) {
		return nil, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request"}
	}
	return &m, nil
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// outMessage is a JSON-RPC message to the client.
type outMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	// Shadow, when set, is sent as a second result member after the
	// first (DuplicateResult).
	Shadow any `json:"-"`
}

var nullID = json.RawMessage("null")

func resultMessage(id json.RawMessage, result any) *outMessage {
	return &outMessage{JSONRPC: "2.0", ID: id, Result: result}
}

func errorMessage(id json.RawMessage, err *rpcError) *outMessage {
	if len(id) == 0 {
		id = nullID
	}
	return &outMessage{JSONRPC: "2.0", ID: id, Error: err}
}

func requestMessage(id, method string) *outMessage {
	return &outMessage{JSONRPC: "2.0", ID: json.RawMessage(strconv.Quote(id)), Method: method}
}

func notificationMessage(method string) *outMessage {
	return &outMessage{JSONRPC: "2.0", Method: method}
}

func (m *outMessage) encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		// Every result is built here from maps, slices and strings.
		panic(fmt.Sprintf("probetest: encode %s: %v", m.Method, err))
	}
	if m.Shadow != nil {
		shadow, err := json.Marshal(m.Shadow)
		if err != nil {
			panic(fmt.Sprintf("probetest: encode the shadow result: %v", err))
		}
		b = append(append(append(b[:len(b)-1], `,"result":`...), shadow...), '}')
	}
	return b
}

// hugeLine streams a JSON-RPC result for id whose padding is HugeLineBytes
// long, so the 50 MiB line never exists in memory.
func hugeLine(id json.RawMessage) io.Reader {
	head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"padding":"`
	return io.MultiReader(strings.NewReader(head),
		io.LimitReader(repeatByte('x'), HugeLineBytes),
		strings.NewReader(`"}}`))
}

// repeatByte is an endless reader of one byte.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// errClientGone ends a wait for a client that disconnected or a server that
// closed.
var errClientGone = errors.New("probetest: client gone or server closed")

package probetest_test

import (
	"encoding/json"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestMain(m *testing.M) {
	probetest.RunIfChild()
	goleak.VerifyTestMain(m)
}

// rpcMsg is any JSON-RPC message a test server sends.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (m rpcMsg) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

func decodeMsg(t *testing.T, b []byte) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %.300q", err, b)
	}
	return m
}

// listResult is a tools/list result, with the modern fields.
type listResult struct {
	Tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	NextCursor *string `json:"nextCursor"`
	ResultType string  `json:"resultType"`
	TTLMs      *int64  `json:"ttlMs"`
	CacheScope string  `json:"cacheScope"`
}

func (m rpcMsg) list(t *testing.T) listResult {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/list failed: %d %s", m.Error.Code, m.Error.Message)
	}
	var r listResult
	if err := json.Unmarshal(m.Result, &r); err != nil || r.Tools == nil {
		t.Fatalf("not a tools/list result (%v): %.300s", err, m.Result)
	}
	return r
}

func (r listResult) names() []string {
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (m rpcMsg) errorCode() int {
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// field decodes one field of the result.
func (m rpcMsg) field(t *testing.T, name string, into any) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &fields); err != nil {
		t.Fatalf("result is not an object: %.300s", m.Result)
	}
	raw, ok := fields[name]
	if !ok {
		t.Fatalf("result has no %q: %.300s", name, m.Result)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("result field %q: %v", name, err)
	}
}

// modernParams adds the 2026-07-28 _meta envelope to params.
func modernParams(version string, params map[string]any) map[string]any {
	out := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "probetest-test", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	for k, v := range params {
		out[k] = v
	}
	return out
}

func initializeParams(version string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "probetest-test", "version": "0"},
	}
}

var reportTools = []string{"fetch_daily_report", "list_report_dates"}

package peertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Response is one recorded answer of a pinned server to a canary call,
// made against the stand-in of its API with a given credential: the
// fixtures of the credential classifier (testdata/peers/responses). The
// test that records them (go test ./internal/peertest -run
// TestRecordedResponses -record) also checks, on every run where the
// servers are installed, that the servers still answer so.
type Response struct {
	Server     string          `json:"server"`     // package@version
	Credential string          `json:"credential"` // what it was given, in words
	Upstream   string          `json:"upstream"`   // what the stand-in answered the server, in words
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	// Rejected is what the classifier must make of it.
	Rejected bool              `json:"rejected"`
	Call     *probe.CallResult `json:"call"`
}

// ResponsesDir is where the recorded responses are.
func ResponsesDir() string { return filepath.Join(dir(), "responses") }

// ToolsDir is where the recorded tool lists are, one file per pinned
// server (its package name, .json): what each lists, annotations included.
func ToolsDir() string { return filepath.Join(dir(), "tools") }

// LoadTools reads the recorded tool list of a pinned server.
func LoadTools(pkg string) ([]probe.Tool, error) {
	raw, err := os.ReadFile(filepath.Join(ToolsDir(), pkg+".json")) //nolint:gosec // G304: the repository's own fixtures
	if err != nil {
		return nil, err
	}
	var tools []probe.Tool
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	return tools, nil
}

// LoadResponses reads every recorded response, by file name (without .json).
func LoadResponses() (map[string]Response, error) {
	files, err := filepath.Glob(filepath.Join(ResponsesDir(), "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no recorded responses in %s", ResponsesDir())
	}
	out := map[string]Response{}
	for _, f := range files {
		raw, err := os.ReadFile(f) //nolint:gosec // G304: the repository's own fixtures
		if err != nil {
			return nil, err
		}
		var r Response
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[filepath.Base(f[:len(f)-len(".json")])] = r
	}
	return out, nil
}

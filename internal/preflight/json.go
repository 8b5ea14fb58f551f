package preflight

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpwatch/mcpwatch/internal/atomicfile"
)

// WriteJSON writes the full report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	data, err := marshalReport(r)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// WriteReceipt writes the report to path atomically, as a record of what
// was observed: handshake, versions, every tool with its schemas, timings
// and verdicts, mcpwatch's version and the time. A reader never sees a
// half-written receipt, and a failed write leaves the old file.
func WriteReceipt(path string, r *Report) error {
	data, err := marshalReport(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}

// marshalReport encodes the report for people to read too: indented, and
// with "->" and "<redacted>" as written rather than \u003e escapes.
func marshalReport(r *Report) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return buf.Bytes(), nil
}

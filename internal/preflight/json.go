package preflight

import (
	"fmt"
	"io"

	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
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

// marshalReport encodes the report as a JSON document (see jsondoc).
func marshalReport(r *Report) ([]byte, error) {
	data, err := jsondoc.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return data, nil
}

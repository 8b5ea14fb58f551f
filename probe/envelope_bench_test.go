package probe

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// BenchmarkParseMessage reads one response whole, as a buffered HTTP body,
// an event's data or a line of stdio is read: an initialize result.
func BenchmarkParseMessage(b *testing.B) {
	raw := []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"report-server","version":"1.0.0"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := parseMessage(raw)
		if err != nil || len(m.Result) == 0 {
			b.Fatal(m, err)
		}
	}
}

// The envelope of a tools/list answer read over streamable HTTP costs one
// copy, the id's: the member names are compared where the decoder holds
// them, and "2.0" is a constant. (A name kept for an error escaped, and
// cost a copy of every name of every answer.)
func TestDecodeResponseAllocations(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"_meta":{}}`)
	r := bytes.NewReader(body)
	dec := newDecoder(r)
	skip := func(dec *jsontext.Decoder) error { return dec.SkipValue() }
	id := json.RawMessage("1")
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		dec.Reset(r, decoderOptions...)
		if err := decodeResponse(dec, id, "tools/list to test", 200, "tools/list", skip); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("reading the envelope cost %v allocations; want 1, the id's copy", allocs)
	}
}

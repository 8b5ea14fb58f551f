package probe

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodePage decodes one tools/list result of 40 tools, each with
// a description, a small schema and annotations: the part of every probe
// that grows with the server's surface.
func BenchmarkDecodePage(b *testing.B) {
	var tools []string
	for i := range 40 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%02d","title":"Tool %d","description":"Fetches report %d for a date range, one page at a time.",`+
			`"inputSchema":{"type":"object","properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"page":{"type":"integer","minimum":1}},"required":["from"]},`+
			`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`, i, i, i))
	}
	result := []byte(`{"tools":[` + strings.Join(tools, ",") + `]}`)
	b.SetBytes(int64(len(result)))
	b.ReportAllocs()
	for b.Loop() {
		s := newTestSession()
		if _, err := s.decodePage(newDecoder(bytes.NewReader(result)), true, map[string]bool{}); err != nil {
			b.Fatal(err)
		}
		if len(s.res.Tools) != 40 {
			b.Fatalf("%d tools", len(s.res.Tools))
		}
	}
}

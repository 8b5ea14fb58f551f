package probe

import "testing"

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

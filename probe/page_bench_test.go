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
	result := pageOf40Tools()
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

// pageOf40Tools is a tools/list result of 40 tools, each with a title, a
// description, a small schema and annotations.
func pageOf40Tools() []byte {
	var tools []string
	for i := range 40 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%02d","title":"Tool %d","description":"Fetches report %d for a date range, one page at a time.",`+
			`"inputSchema":{"type":"object","properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"page":{"type":"integer","minimum":1}},"required":["from"]},`+
			`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`, i, i, i))
	}
	return []byte(`{"tools":[` + strings.Join(tools, ",") + `]}`)
}

// A server that lists what it listed before costs its decoding no new
// text: the tools' names, titles, descriptions, schemas and annotations are
// the ones decoded last time (toolText), where each was a new string or a
// copy of its bytes (5 allocations a tool, over 200 for this page).
func TestDecodePageSteadyServerAllocations(t *testing.T) {
	result := pageOf40Tools()
	decode := func() {
		s := newTestSession()
		names := getNameSet()
		defer putNameSet(names)
		dec := getDecoder(bytes.NewReader(result))
		defer putDecoder(dec)
		if _, err := s.decodePage(dec, true, names); err != nil || len(s.res.Tools) != 40 {
			t.Fatalf("%d tools, %v", len(s.res.Tools), err)
		}
	}
	decode() // the text is new once
	allocs := testing.AllocsPerRun(50, decode)
	// What is left: the session, the decoder's reader, the result's
	// tools growing to 40 (a few doublings), and a few for the page.
	if allocs > 40 {
		t.Errorf("decoding a page of 40 known tools cost %v allocations; want at most 40 (one a tool or less)", allocs)
	}
}

package lockstore

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkCompare1000 is the lock diff of one server with 1,000 tools, the
// figure the README's performance section gives: names only, and with every fingerprint checked.
// Five tools are missing, five extra and one retyped, so every branch runs.
func BenchmarkCompare1000(b *testing.B) {
	const n = 1000
	observed := make([]Observed, n)
	for i := range observed {
		observed[i] = Observed{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: fmt.Sprintf("Tool number %d: fetches a report for a date range, paginated.", i),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type": "object", "properties": {
				"from": {"type": "string", "format": "date", "description": "first day"},
				"to": {"type": "string", "format": "date", "description": "last day"},
				"page": {"type": "integer", "minimum": 1},
				"kind": {"type": "string", "enum": ["daily", "weekly", "k%d"]}
			}, "required": ["from", "to"]}`, i)),
		}
	}
	for _, mode := range []struct {
		name         string
		fingerprints bool
	}{{"names", false}, {"fingerprints", true}} {
		b.Run(mode.name, func(b *testing.B) {
			entry := NewEntry(observed, mode.fingerprints)
			seen := append([]Observed(nil), observed[5:]...)
			for i := range 5 {
				seen = append(seen, Observed{Name: fmt.Sprintf("extra_%d", i)})
			}
			seen[0].InputSchema = json.RawMessage(`{"type": "object", "properties": {"from": {"type": "integer"}}}`)
			forbid := []string{"delete_*", "*_admin"}
			want := Compare(entry, true, seen, forbid)
			if len(want.Missing) != 5 || len(want.Extra) != 5 || len(want.SchemaChanged) != map[bool]int{false: 0, true: 1}[mode.fingerprints] {
				b.Fatalf("unexpected diff: %d missing, %d extra, %d changed", len(want.Missing), len(want.Extra), len(want.SchemaChanged))
			}
			b.ReportAllocs()
			for b.Loop() {
				Compare(entry, true, seen, forbid)
			}
		})
	}
}

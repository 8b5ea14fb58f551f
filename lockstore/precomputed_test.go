package lockstore

import (
	"encoding/json"
	"slices"
	"testing"
)

// A fingerprint the caller computed already is used as given, in place of
// the schema's: Compare and NewEntry trust it, so a caller reusing one while
// the schema's bytes are unchanged pays nothing for it.
func TestObservedFingerprintIsUsedWhenGiven(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {"date": {"type": "string"}}}`)
	other := json.RawMessage(`{"type": "object", "properties": {"date": {"type": "integer"}}}`)
	entry := NewEntry([]Observed{{Name: "fetch", InputSchema: schema}}, true)

	for _, tc := range []struct {
		name    string
		obs     Observed
		changed []string
	}{
		{"schema only, same", Observed{Name: "fetch", InputSchema: schema}, nil},
		{"schema only, retyped", Observed{Name: "fetch", InputSchema: other}, []string{"fetch"}},
		{"given, agrees", Observed{Name: "fetch", InputSchema: schema, Fingerprint: Fingerprint(schema)}, nil},
		{"given without the schema", Observed{Name: "fetch", Fingerprint: Fingerprint(schema)}, nil},
		{"given wins over the schema", Observed{Name: "fetch", InputSchema: schema, Fingerprint: Fingerprint(other)}, []string{"fetch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(entry, true, []Observed{tc.obs}, nil)
			if !slices.Equal(d.SchemaChanged, tc.changed) {
				t.Errorf("SchemaChanged = %v, want %v", d.SchemaChanged, tc.changed)
			}
		})
	}
	got := NewEntry([]Observed{{Name: "fetch", Fingerprint: Fingerprint(schema)}}, true)
	if !got.Equal(entry) {
		t.Errorf("NewEntry from a given fingerprint = %+v, want %+v", got, entry)
	}
}

package probe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// FuzzHints: annotations read as read-only only when the exact key
// readOnlyHint is there once, with true; whatever the bytes, Hints agrees
// with an exact, case-sensitive reading of the object, and refuses an
// object with a key twice.
func FuzzHints(f *testing.F) {
	for _, seed := range []string{
		`{"readOnlyHint":true}`, `{"READONLYHINT":true}`, `{"readOnlyHint":false,"ReadOnlyHint":true}`,
		`{"readOnlyHint":false,"readOnlyHint":true}`, `{"readOnlyHint":"true"}`, `{"readOnlyHint":null}`,
		`{"title":"x","destructiveHint":false,"x":{"readOnlyHint":true}}`, `[true]`, `null`, ``, `{"readOnlyHin\u212a":true}`,
		`{"readOnlyHint":true,"readOnly\u0048int":false}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := probe.Tool{Name: "t", Annotations: json.RawMessage(raw)}.Hints()
		if err != nil {
			if h != (probe.Annotations{}) {
				t.Fatalf("%s: hints %+v with error %v", raw, h, err)
			}
			return
		}
		// Trusted: a JSON object with no key twice.
		var exact map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &exact) != nil {
			t.Fatalf("%s: trusted, but not a JSON object", raw)
		}
		if keys := countKeys(t, raw); keys != len(exact) {
			t.Fatalf("%s: trusted with %d keys, %d distinct", raw, keys, len(exact))
		}
		for key, got := range map[string]*bool{"readOnlyHint": h.ReadOnlyHint, "destructiveHint": h.DestructiveHint, "idempotentHint": h.IdempotentHint, "openWorldHint": h.OpenWorldHint} {
			var want *bool
			if v, ok := exact[key]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				var b bool
				if json.Unmarshal(v, &b) != nil {
					t.Fatalf("%s: %s is no boolean, yet trusted", raw, key)
				}
				want = &b
			}
			if (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Fatalf("%s: %s = %v, want %v", raw, key, got, want)
			}
		}
	})
}

// countKeys counts the members of the top-level object of raw.
func countKeys(t *testing.T, raw string) int {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestHintsAbsent(t *testing.T) {
	for _, raw := range []string{``, `null`, ` null `} {
		if _, err := (probe.Tool{Annotations: json.RawMessage(raw)}).Hints(); !errors.Is(err, probe.ErrNoAnnotations) {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

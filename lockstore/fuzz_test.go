package lockstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it accepts is written in a form
// it reads back to the same entries, and rewrites unchanged.
func FuzzParse(f *testing.F) {
	fixtures, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"a": []}`, `{"a": [1]}`, `{"a": {"t": {}}}`, `{"a": {"t": null}}`,
		`{"a": {"t": {"schema": "sha256:0"}}}`, `{"a": ["x"], "a": ["y"]}`, "{\"\\u00e9\": [\"\\ud83d\\ude00\"]}",
		`{"a": {"error": "boom"}}`, "{\n\"a\":[\"b\",\n\"c\"]}\n\n", `{"a" : [ "b" , "c" ] }  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			if pe := (*ParseError)(nil); !errors.As(err, &pe) {
				t.Fatalf("Parse error is %T, not *ParseError: %v", err, err)
			}
			return
		}
		written := l.Marshal()
		back, err := Parse(written)
		if err != nil {
			t.Fatalf("Parse(Marshal()) failed: %v\ninput %q\nwritten %q", err, data, written)
		}
		if again := back.Marshal(); !bytes.Equal(again, written) {
			t.Fatalf("rewrite not stable:\nfirst  %q\nsecond %q", written, again)
		}
		// A fresh lock from the same entries (no raw bytes) reads back equal.
		fresh := New()
		for _, server := range l.Servers() {
			e, _ := l.Entry(server)
			fresh.Set(server, e)
			b, ok := back.Entry(server)
			if !ok || !e.Equal(b) {
				t.Fatalf("server %q: read %v, read back %v", server, e, b)
			}
		}
		reread, err := Parse(fresh.Marshal())
		if err != nil {
			t.Fatalf("Parse(fresh.Marshal()) failed: %v\n%q", err, fresh.Marshal())
		}
		if len(reread.Servers()) != len(l.Servers()) {
			t.Fatalf("fresh rewrite has servers %v, want %v", reread.Servers(), l.Servers())
		}
		for _, server := range l.Servers() {
			e, _ := l.Entry(server)
			r, _ := reread.Entry(server)
			if !e.Equal(r) {
				t.Fatalf("server %q: fresh rewrite read back %v, want %v", server, r, e)
			}
		}
	})
}

// FuzzFingerprint: Fingerprint never panics, and a schema re-encoded with its
// keys reordered and its whitespace changed keeps its fingerprint.
func FuzzFingerprint(f *testing.F) {
	for _, s := range []string{
		baseSchema, `{}`, `true`, `null`, `{"enum": [1, 1.0, "1"]}`, `{"anyOf": [{"type": "x"}, {"type": "x"}]}`,
		`{"properties": {"a": {"items": [{"const": {"b": [1e3]}}]}}, "dependencies": {"a": ["b"], "c": {"type": "string"}}}`,
	} {
		f.Add([]byte(s))
	}
	// Huge numerals, which once cost seconds each.
	f.Add([]byte(`{"maximum": 1` + strings.Repeat("7", 200_000) + `}`))
	f.Add([]byte(`{"enum": [0.` + strings.Repeat("0", 200_000) + `1, 1e` + strings.Repeat("9", 1000) + `]}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		fp := Fingerprint(schema)
		if !validHash(fp) {
			t.Fatalf("Fingerprint(%q) = %q", schema, fp)
		}
		dec := json.NewDecoder(bytes.NewReader(schema))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || !atEOF(dec) {
			return
		}
		reencoded, err := json.MarshalIndent(v, "", "   ") // map keys come out sorted
		if err != nil {
			return
		}
		if again := Fingerprint(reencoded); again != fp {
			t.Fatalf("re-encoding changed the fingerprint:\n%q\n%q", schema, reencoded)
		}
	})
}

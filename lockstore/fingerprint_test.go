package lockstore

import (
	"encoding/json"
	"strings"
	"testing"
)

// The example report server's fetch_daily_report schema, the base every case below varies.
const baseSchema = `{"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}`

func TestFingerprintIgnoresWhatOnlyDocuments(t *testing.T) {
	cases := map[string]string{
		"key order and spacing":   `{"required":["date"],"properties":{"date":{"type":"string"}},"type":"object"}`,
		"descriptions and titles": `{"type": "object", "title": "Args", "description": "Fetch it", "properties": {"date": {"type": "string", "description": "ISO date", "title": "Date"}}, "required": ["date"]}`,
		"examples and defaults":   `{"type": "object", "examples": [{"date": "2026-01-01"}], "properties": {"date": {"type": "string", "default": "today", "examples": ["2026-01-01"], "$comment": "why"}}, "required": ["date"]}`,
		"dialect, ids, vendor":    `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x", "x-vendor": 1, "type": "object", "properties": {"date": {"type": "string", "deprecated": false}}, "required": ["date"]}`,
		"type as a list":          `{"type": ["object"], "properties": {"date": {"type": ["string"]}}, "required": ["date"]}`,
		"required repeated":       `{"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date", "date"]}`,
		"empty properties added":  `{"type": "object", "properties": {"date": {"type": "string", "properties": {}, "required": []}}, "required": ["date"]}`,
	}
	want := Fingerprint(json.RawMessage(baseSchema))
	for name, schema := range cases {
		if got := Fingerprint(json.RawMessage(schema)); got != want {
			t.Errorf("%s: fingerprint changed (%s vs %s)", name, got, want)
		}
	}
}

func TestFingerprintOrderInsensitiveSets(t *testing.T) {
	pairs := [][2]string{
		{`{"required": ["a", "b"]}`, `{"required": ["b", "a"]}`},
		{`{"type": ["string", "null"]}`, `{"type": ["null", "string"]}`},
		{`{"enum": ["x", 1, null]}`, `{"enum": [null, 1, "x"]}`},
		{`{"anyOf": [{"type": "string"}, {"type": "integer"}]}`, `{"anyOf": [{"type": "integer"}, {"type": "string"}]}`},
		{`{"maximum": 1}`, `{"maximum": 1.0}`},
		{`{"enum": [10]}`, `{"enum": [1e1]}`},
		{``, `{}`},
		{`null`, `{}`},
	}
	for _, p := range pairs {
		if a, b := Fingerprint(json.RawMessage(p[0])), Fingerprint(json.RawMessage(p[1])); a != b {
			t.Errorf("%s and %s fingerprint differently", p[0], p[1])
		}
	}
}

func TestFingerprintSeesStructuralChanges(t *testing.T) {
	cases := map[string]string{
		"a type change":               `{"type": "object", "properties": {"date": {"type": "integer"}}, "required": ["date"]}`,
		"a new required field":        `{"type": "object", "properties": {"date": {"type": "string"}, "tz": {"type": "string"}}, "required": ["date", "tz"]}`,
		"a new optional property":     `{"type": "object", "properties": {"date": {"type": "string"}, "tz": {"type": "string"}}, "required": ["date"]}`,
		"a renamed property":          `{"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]}`,
		"no longer required":          `{"type": "object", "properties": {"date": {"type": "string"}}}`,
		"an enum added":               `{"type": "object", "properties": {"date": {"type": "string", "enum": ["today"]}}, "required": ["date"]}`,
		"a format":                    `{"type": "object", "properties": {"date": {"type": "string", "format": "date"}}, "required": ["date"]}`,
		"a bound":                     `{"type": "object", "properties": {"date": {"type": "string", "maxLength": 10}}, "required": ["date"]}`,
		"additionalProperties closed": `{"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"], "additionalProperties": false}`,
		"a nested change in $defs":    `{"type": "object", "properties": {"date": {"$ref": "#/$defs/d"}}, "required": ["date"], "$defs": {"d": {"type": "string"}}}`,
		"a property named title":      `{"type": "object", "properties": {"date": {"type": "string"}, "title": {"type": "string"}}, "required": ["date"]}`,
		"not JSON":                    `{"type": "object",`,
	}
	base := Fingerprint(json.RawMessage(baseSchema))
	seen := map[string]string{base: "the base schema"}
	for name, schema := range cases {
		got := Fingerprint(json.RawMessage(schema))
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: fingerprint equals that of %s", name, prev)
		}
		seen[got] = name
	}
}

func TestFingerprintEnumValues(t *testing.T) {
	a := Fingerprint(json.RawMessage(`{"type": "string", "enum": ["daily", "weekly"]}`))
	b := Fingerprint(json.RawMessage(`{"type": "string", "enum": ["daily", "weekly", "monthly"]}`))
	c := Fingerprint(json.RawMessage(`{"type": "string", "enum": ["daily", "Weekly"]}`))
	if a == b || a == c || b == c {
		t.Errorf("enum changes not seen: %s %s %s", a, b, c)
	}
}

func TestFingerprintTupleOrderMatters(t *testing.T) {
	a := Fingerprint(json.RawMessage(`{"prefixItems": [{"type": "string"}, {"type": "integer"}]}`))
	b := Fingerprint(json.RawMessage(`{"prefixItems": [{"type": "integer"}, {"type": "string"}]}`))
	if a == b {
		t.Error("swapping tuple positions did not change the fingerprint")
	}
}

func TestFingerprintHugeExponentIsCheap(t *testing.T) {
	// A billion-digit exact value would take minutes and gigabytes.
	a := Fingerprint(json.RawMessage(`{"maximum": 1e999999999}`))
	b := Fingerprint(json.RawMessage(`{"maximum": 1e999999998}`))
	if a == b {
		t.Error("different huge numbers fingerprint alike")
	}
}

func TestHashFormat(t *testing.T) {
	for _, h := range []string{Fingerprint(json.RawMessage(baseSchema)), DescriptionHash(""), DescriptionHash("Fetch the daily sales report")} {
		if !validHash(h) {
			t.Errorf("%q is not sha256:<64 hex>", h)
		}
	}
	if DescriptionHash("Fetch the report") == DescriptionHash("Fetch the report ") {
		t.Error("a trailing space must change the description hash")
	}
	// sha256("") is well known: the hash is of the exact bytes.
	if got := DescriptionHash(""); !strings.HasSuffix(got, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") {
		t.Errorf("DescriptionHash(\"\") = %s", got)
	}
}

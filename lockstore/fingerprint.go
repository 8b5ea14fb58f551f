package lockstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

const hashPrefix = "sha256:"

// DescriptionHash is "sha256:<hex>" of the description's exact bytes: for
// tool-poisoning review any change counts, whitespace included.
func DescriptionHash(desc string) string {
	sum := sha256.Sum256([]byte(desc))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// Fingerprint is "sha256:<hex>" of the structure of a tool's input schema:
// what decides which calls the tool accepts. It keeps types, required,
// property names, enums, const, $ref, formats, patterns and bounds, recursing
// through every subschema; it drops description, title, examples, default,
// $comment and any keyword it does not know (vendor extensions), so rewording
// a tool's documentation does not change it. Key order, the order of
// "required", "type", "enum" and of anyOf/oneOf/allOf branches, and number
// spelling (1 vs 1.0) do not matter. An absent or null schema fingerprints as
// {}; bytes that are not JSON are hashed as they are, so a change still shows.
//
// The canonical form is part of the lock format: changing what it keeps would
// make every locked fingerprint differ, and needs a new prefix.
func Fingerprint(inputSchema json.RawMessage) string {
	doc := bytes.TrimSpace(inputSchema)
	if len(doc) == 0 || string(doc) == "null" {
		doc = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var schema any
	if err := dec.Decode(&schema); err != nil || !atEOF(dec) {
		return hashBytes(append([]byte("not json\x00"), doc...))
	}
	return hashBytes(appendSchema(nil, schema))
}

func atEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hashPrefix + hex.EncodeToString(sum[:])
}

// keywordKind says how a kept keyword's value is made canonical.
type keywordKind int

const (
	kindValue        keywordKind = iota // any JSON value, written canonically
	kindSchema                          // one subschema
	kindSchemaMap                       // name -> subschema
	kindSchemaSet                       // subschemas whose order does not matter
	kindSchemaOrList                    // one subschema, or an ordered tuple of them
	kindStringSet                       // a string or strings whose order does not matter
	kindValueSet                        // values whose order does not matter
	kindDependencies                    // draft-07 dependencies: name -> string set or subschema
	kindStringSetMap                    // name -> string set
)

// structuralKeyword says whether the fingerprint keeps a keyword, and how.
// Anything not listed (annotations, vendor "x-" keys, $id, $schema) is left
// out. droppable keywords say nothing when empty ("required": [],
// "properties": {}), so writing them or leaving them out fingerprints alike.
func structuralKeyword(k string) (kind keywordKind, droppable, kept bool) {
	switch k {
	case "required":
		return kindStringSet, true, true
	case "type":
		return kindStringSet, false, true
	case "enum":
		return kindValueSet, false, true
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return kindSchemaMap, true, true
	case "dependencies":
		return kindDependencies, true, true
	case "dependentRequired":
		return kindStringSetMap, true, true
	case "additionalProperties", "unevaluatedProperties", "propertyNames", "additionalItems",
		"unevaluatedItems", "contains", "not", "if", "then", "else":
		return kindSchema, false, true
	case "items", "prefixItems":
		return kindSchemaOrList, false, true
	case "anyOf", "oneOf", "allOf":
		return kindSchemaSet, false, true
	case "const", "$ref", "$dynamicRef", "format", "pattern",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
		"minProperties", "maxProperties", "minContains", "maxContains":
		return kindValue, false, true
	}
	return 0, false, false
}

// appendSchema writes the canonical form of a schema: an object keeps only
// structural keywords, in sorted order; true and false stay as they are;
// anything else is not a schema and is written as a plain value.
func appendSchema(b []byte, schema any) []byte {
	obj, ok := schema.(map[string]any)
	if !ok {
		return appendValue(b, schema)
	}
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		if _, droppable, kept := structuralKeyword(k); kept && !(droppable && emptyCollection(v)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		kind, _, _ := structuralKeyword(k)
		b = appendKeyword(b, kind, obj[k])
	}
	return append(b, '}')
}

func emptyCollection(v any) bool {
	switch v := v.(type) {
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func appendKeyword(b []byte, kind keywordKind, v any) []byte {
	switch kind {
	case kindSchema:
		return appendSchema(b, v)
	case kindSchemaMap:
		return appendMap(b, v, appendSchema)
	case kindSchemaSet:
		return appendSet(b, v, appendSchema)
	case kindSchemaOrList:
		if list, ok := v.([]any); ok {
			return appendList(b, list, appendSchema)
		}
		return appendSchema(b, v)
	case kindStringSet:
		if s, ok := v.(string); ok {
			v = []any{s} // "type": "string" means ["string"]
		}
		return appendSet(b, v, appendValue)
	case kindValueSet:
		return appendSet(b, v, appendValue)
	case kindDependencies:
		return appendMap(b, v, func(b []byte, dep any) []byte {
			if _, ok := dep.([]any); ok {
				return appendSet(b, dep, appendValue)
			}
			return appendSchema(b, dep)
		})
	case kindStringSetMap:
		return appendMap(b, v, func(b []byte, names any) []byte { return appendSet(b, names, appendValue) })
	default:
		return appendValue(b, v)
	}
}

// appendMap writes an object whose values are canonicalized by each; a value
// of the wrong shape is written as a plain value so it still counts.
func appendMap(b []byte, v any, each func([]byte, any) []byte) []byte {
	obj, ok := v.(map[string]any)
	if !ok {
		return appendValue(b, v)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = each(b, obj[k])
	}
	return append(b, '}')
}

func appendList(b []byte, list []any, each func([]byte, any) []byte) []byte {
	b = append(b, '[')
	for i, item := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, item)
	}
	return append(b, ']')
}

// appendSet writes a list as a sorted set of canonical encodings, duplicates
// dropped. A value that is not a list is written as a plain value.
func appendSet(b []byte, v any, each func([]byte, any) []byte) []byte {
	list, ok := v.([]any)
	if !ok {
		return appendValue(b, v)
	}
	encoded := make([][]byte, len(list))
	for i, item := range list {
		encoded[i] = each(nil, item)
	}
	slices.SortFunc(encoded, bytes.Compare)
	encoded = slices.CompactFunc(encoded, bytes.Equal)
	b = append(b, '[')
	for i, e := range encoded {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// appendValue writes any decoded JSON value canonically: objects with sorted
// keys, numbers by their exact value. The encoding only has to be injective,
// not JSON: numbers are written as exact fractions ("1/10").
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return strconv.AppendQuote(b, v)
	case json.Number:
		return append(b, canonicalNumber(string(v))...)
	case []any:
		return appendList(b, v, appendValue)
	case map[string]any:
		return appendMap(b, v, appendValue)
	default: // not produced by encoding/json with UseNumber
		return append(b, "?"...)
	}
}

// Numbers are made canonical by their exact value, as the fraction in
// lowest terms ("1", "-3/4", "1/10"), with plain integer and uint64
// arithmetic on the literal's digits: no arbitrary-precision arithmetic, so
// the cost is linear in the literal and tiny for any number a schema means.
// A literal outside these bounds is kept as written, prefixed with "~" so it
// cannot equal an exact form; it still counts, and a change still shows.
const (
	// maxNumberLen bounds the literals read for their value. A number in a
	// schema is a bound, a multipleOf or an enum or const value: float64 and
	// int64 spell any of theirs in 25 characters. A hostile server can send
	// a 3-million-digit literal within the message cap; read for its exact
	// value with big arithmetic, that cost 15-35 s of CPU.
	maxNumberLen = 100
	// maxExactExponent bounds the exponents of integers written out in
	// full: 1e999999999 would otherwise be a billion digits.
	maxExactExponent = 400
	// maxFractionDigits bounds the significant digits and the decimal places
	// of a fraction, so that its numerator and denominator (at most 10^19)
	// fit in a uint64.
	maxFractionDigits = 19
)

// canonicalNumber writes 1, 1.0 and 10e-1 alike: the exact value, as
// big.Rat's RatString would write it (which is what earlier versions used,
// so locked fingerprints stay valid), within the bounds above.
func canonicalNumber(n string) string {
	if len(n) > maxNumberLen {
		return "~" + n
	}
	lit := n
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mantissa, expPart, hasExp := strings.Cut(strings.ToLower(lit), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(expPart, "+"))
		if err != nil || e < -maxExactExponent || e > maxExactExponent {
			return "~" + n
		}
		exp = e
	}
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return "~" + n // not produced by encoding/json: keep it as written
	}
	// value = digits * 10^exp, digits without leading or trailing zeros.
	digits := strings.TrimLeft(intPart+fracPart, "0")
	exp -= len(fracPart)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if digits == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if exp >= 0 {
		// At most maxExactExponent + maxNumberLen zeros.
		return sign + digits + strings.Repeat("0", exp)
	}
	places := -exp
	if len(digits) > maxFractionDigits || places > maxFractionDigits {
		return "~" + n
	}
	num, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return "~" + n
	}
	// num / 10^places in lowest terms: 10 = 2*5, and num has no factor 10,
	// so only twos or only fives can cancel.
	twos, fives := places, places
	for twos > 0 && num%2 == 0 {
		num, twos = num/2, twos-1
	}
	for fives > 0 && num%5 == 0 {
		num, fives = num/5, fives-1
	}
	den := uint64(1)
	for range twos {
		den *= 2
	}
	for range fives {
		den *= 5
	}
	return sign + strconv.FormatUint(num, 10) + "/" + strconv.FormatUint(den, 10)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

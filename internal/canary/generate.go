package canary

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Generated inputs: mcp-probe's auto-generated smoke inputs. A read-only
// tool that needs input gets the smallest input its schema allows, so that
// a call reaches it: a value the schema gives (const, default, the first
// of examples or enum), else one of the type's plain shape within its
// constraints (a short string of its format, matching its pattern, within
// its lengths; the least number it allows; the fewest items). The input is
// then checked against the whole schema by the validator the jsonSchema
// assertion uses: what does not validate is not proposed. Whatever the
// tool makes of it, found or not found, the call shows whether the
// server's credential is taken; it is judged so ("credentialAccepted"),
// never as a success.

// generatedString is the short string a generated input sends where the
// schema says only "a string": harmless as a query, a name or a path, and
// plain to see in a server's logs.
const generatedString = "mcpwatch"

// maxGenerateDepth bounds how deep generation follows nested objects and
// $refs: a recursive schema ends here, as no input.
const maxGenerateDepth = 8

// maxGeneratedLength bounds a generated string and a generated array: an
// input longer than this is not a smoke input.
const (
	maxGeneratedLength = 256
	maxGeneratedItems  = 10
)

// GenerateInput is an input for a tool from its input schema, with a
// value for every required property, nested required objects included.
// The error says which constraint of which property no value could be
// made for ("input property fileKey: pattern ^(?=x) cannot be generated
// ..."), or how the value made failed the schema; the contract then waits
// for a person's input.
func GenerateInput(schema json.RawMessage) (map[string]any, error) {
	var root map[string]any
	if len(schema) == 0 {
		return map[string]any{}, nil
	}
	if json.Unmarshal(schema, &root) != nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	g := generator{root: root}
	v, err := g.object(root, "input", 0)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	switch err := contracts.ValidateInput(schema, m); {
	case errors.Is(err, contracts.ErrSchemaUnread):
		// Nothing better to check it with: the generator's own reading
		// of every constraint it knows stands.
	case err != nil:
		return nil, fmt.Errorf("the input mcpwatch generated, %s, does not validate against the schema: %w", sanitize.Truncate(marshal(m), 200), err)
	}
	return m, nil
}

type generator struct{ root map[string]any }

// genError is a value no generator could make, at a path of the input.
type genError struct {
	path, why string
}

func (e *genError) Error() string {
	if e.path == "input" {
		return "input: " + e.why
	}
	return "input property " + strings.TrimPrefix(e.path, "input.") + ": " + e.why
}

func fail(path, format string, args ...any) error {
	return &genError{path: path, why: fmt.Sprintf(format, args...)}
}

// value is a value for one schema, at path.
func (g generator) value(s map[string]any, path string, depth int) (any, error) {
	if depth > maxGenerateDepth {
		return nil, fail(path, "nested more than %d levels deep (a recursive schema?)", maxGenerateDepth)
	}
	if ref, ok := s["$ref"].(string); ok {
		target, ok := g.resolve(ref)
		if !ok {
			return nil, fail(path, "$ref %s does not resolve within the schema (a remote one is never fetched)", quote(ref))
		}
		return g.value(target, path, depth+1)
	}
	if v, ok := s["const"]; ok {
		return v, nil
	}
	if v, ok := s["default"]; ok && v != nil {
		return v, nil
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && ex[0] != nil {
		return ex[0], nil
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0], nil
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		alts, ok := s[key].([]any)
		if !ok || len(alts) == 0 || s["type"] != nil {
			continue
		}
		if key == "allOf" {
			return g.value(merge(alts), path, depth+1)
		}
		var first error
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok && m["type"] != "null" {
				v, err := g.value(m, path, depth+1)
				if err == nil {
					return v, nil
				}
				first = cmpOr(first, err)
			}
		}
		return nil, cmpOr(first, fail(path, "none of its %s alternatives is a value", key))
	}
	switch t := typeOf(s); t {
	case "string":
		return stringFor(s, path)
	case "integer", "number":
		return number(s, t == "integer", path)
	case "boolean":
		return false, nil
	case "null":
		return nil, nil
	case "array":
		return g.array(s, path, depth)
	case "object":
		return g.object(s, path, depth)
	case "":
		return nil, fail(path, "its schema says no type, and gives no value")
	default:
		return nil, fail(path, "type %s is not a JSON type", quote(t))
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// object has a value for each required property, and no other.
func (g generator) object(s map[string]any, path string, depth int) (any, error) {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	req, _ := s["required"].([]any)
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			return nil, fail(path, "its required list holds %s, not a property name", marshal(r))
		}
		p, ok := props[name].(map[string]any)
		if !ok {
			return nil, fail(path+"."+name, "required, but the schema does not describe it")
		}
		v, err := g.value(p, path+"."+name, depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// array has as few items as it may: none, or minItems of one value.
func (g generator) array(s map[string]any, path string, depth int) (any, error) {
	n, _ := s["minItems"].(float64)
	if n <= 0 {
		return []any{}, nil
	}
	if n > maxGeneratedItems {
		return nil, fail(path, "minItems %g: more items than a generated input has (at most %d)", n, maxGeneratedItems)
	}
	items, ok := s["items"].(map[string]any)
	if !ok {
		return nil, fail(path, "minItems %g, but the schema does not describe its items", n)
	}
	if unique, _ := s["uniqueItems"].(bool); unique && n > 1 {
		return nil, fail(path, "minItems %g of uniqueItems: mcpwatch generates one value", n)
	}
	v, err := g.value(items, path+"[0]", depth+1)
	if err != nil {
		return nil, err
	}
	out := make([]any, int(n))
	for i := range out {
		out[i] = v
	}
	return out, nil
}

// resolve follows a local $ref ("#/$defs/x", "#/definitions/x"); a remote
// one is never fetched.
func (g generator) resolve(ref string) (map[string]any, bool) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = g.root
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// merge is allOf's schemas as one: their properties and required lists.
func merge(all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var req []any
	for _, a := range all {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch k {
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for name, s := range p {
						props[name] = s
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					req = append(req, r...)
				}
			default:
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

// typeOf is a schema's type: its "type", the first that is not "null" of a
// list of types, or "object" for a schema with properties.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok && name != "null" {
				return name
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

// formats are a value of each string format a generated input knows, each
// plainly not a real thing: a nil UUID, the epoch of 2026, example.com,
// documentation addresses.
var formats = map[string]string{
	"uuid":          "00000000-0000-0000-0000-000000000000",
	"date-time":     "2026-01-01T00:00:00Z",
	"date":          "2026-01-01",
	"time":          "00:00:00Z",
	"email":         "mcpwatch@example.com",
	"idn-email":     "mcpwatch@example.com",
	"uri":           "https://example.com/",
	"url":           "https://example.com/",
	"iri":           "https://example.com/",
	"uri-reference": "https://example.com/",
	"iri-reference": "https://example.com/",
	"hostname":      "example.com",
	"idn-hostname":  "example.com",
	"ipv4":          "192.0.2.1",
	"ipv6":          "2001:db8::1",
	"duration":      "P1D",
}

// stringFor is a string of the schema's format, else one that matches its
// pattern, else the short string; within minLength and maxLength (in
// characters, as JSON Schema counts them).
func stringFor(s map[string]any, path string) (any, error) {
	minLen, maxLen := 0, maxGeneratedLength
	if n, ok := s["minLength"].(float64); ok {
		if n > maxGeneratedLength {
			return nil, fail(path, "minLength %g: longer than a generated input is (at most %d)", n, maxGeneratedLength)
		}
		minLen = int(math.Ceil(n))
	}
	if n, ok := s["maxLength"].(float64); ok && n < float64(maxLen) {
		maxLen = max(int(n), 0)
	}
	if minLen > maxLen {
		return nil, fail(path, "minLength %d is more than maxLength %d", minLen, maxLen)
	}
	format, _ := s["format"].(string)
	pattern, hasPattern := s["pattern"].(string)
	if v, ok := formats[format]; ok {
		if n := utf8.RuneCountInString(v); n < minLen || n > maxLen {
			return nil, fail(path, "format %s within minLength %d and maxLength %d cannot be generated", format, minLen, maxLen)
		}
		if hasPattern && !matches(pattern, v) {
			return nil, fail(path, "format %s and pattern %s together cannot be generated", format, quote(pattern))
		}
		return v, nil
	}
	if hasPattern {
		v, err := fromPattern(pattern, minLen, maxLen)
		if err != nil {
			return nil, fail(path, "pattern %s cannot be generated (%v)", quote(pattern), err)
		}
		return v, nil
	}
	v := generatedString
	if n := len(v); n < minLen {
		v += strings.Repeat("x", minLen-n)
	}
	if len(v) > maxLen {
		v = v[:maxLen]
	}
	return v, nil
}

// number is the minimum a schema allows (its minimum, or just above an
// exclusive one), else 1 (a limit or a count of 0 is refused by many
// tools), within its maximum, and a multiple of its multipleOf.
func number(s map[string]any, integer bool, path string) (any, error) {
	step := 0.0
	if m, ok := s["multipleOf"].(float64); ok && m > 0 {
		step = m
	}
	if integer && step == 0 {
		step = 1
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	loOpen, hiOpen := false, false
	if m, ok := s["minimum"].(float64); ok {
		lo = m
	}
	if m, ok := s["exclusiveMinimum"].(float64); ok && m >= lo {
		lo, loOpen = m, true
	}
	if m, ok := s["maximum"].(float64); ok {
		hi = m
	}
	if m, ok := s["exclusiveMaximum"].(float64); ok && m <= hi {
		hi, hiOpen = m, true
	}
	in := func(v float64) bool {
		return (v > lo || !loOpen && v == lo) && (v < hi || !hiOpen && v == hi)
	}
	up := func(v float64) float64 { // the least multiple of step at or above v
		if step == 0 {
			return v
		}
		return math.Ceil(v/step) * step
	}
	v := up(1)
	if !math.IsInf(lo, -1) {
		v = up(lo)
		if loOpen && v == lo {
			if step == 0 {
				v = lo + min(0.5, (hi-lo)/2)
			} else {
				v += step
			}
		}
	}
	if !in(v) && !math.IsInf(hi, 1) {
		// Above the maximum: the greatest value it allows.
		v = hi
		if step != 0 {
			v = math.Floor(hi/step) * step
		}
		if hiOpen && v == hi {
			if step == 0 {
				v = hi - min(0.5, (hi-lo)/2)
			} else {
				v -= step
			}
		}
	}
	if !in(v) {
		return nil, fail(path, "no %s within its minimum and maximum%s can be generated", map[bool]string{true: "integer", false: "number"}[integer],
			map[bool]string{true: " that is a multiple of its multipleOf", false: ""}[s["multipleOf"] != nil])
	}
	return v, nil
}

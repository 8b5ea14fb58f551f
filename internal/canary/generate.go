package canary

import (
	"encoding/json"
	"math"
	"strings"
)

// Generated inputs: mcp-probe's auto-generated smoke inputs. A read-only
// tool that needs input gets the smallest input its schema allows, so that
// a call reaches it: a value the schema gives (const, default, the first
// of examples or enum), else one of the type's plain shape (a short string,
// the minimum, a nil UUID for format: uuid). Whatever the tool makes of it,
// found or not found, the call shows whether the server's credential is
// taken; it is judged so ("credentialAccepted"), never as a success.

// generatedString is the short string a generated input sends where the
// schema says only "a string": harmless as a query, a name or a path, and
// plain to see in a server's logs.
const generatedString = "mcpwatch"

// maxGenerateDepth bounds how deep generation follows nested objects and
// $refs: a recursive schema ends here, as no input.
const maxGenerateDepth = 8

// GenerateInput is an input for a tool from its input schema, with a
// value for every required property, nested required objects included;
// ok is false when a required value cannot be made (a schema that says
// nothing of it, a pattern, a $ref that does not resolve), and the
// contract then waits for a person's input.
func GenerateInput(schema json.RawMessage) (map[string]any, bool) {
	var root map[string]any
	if len(schema) == 0 {
		return map[string]any{}, true
	}
	if json.Unmarshal(schema, &root) != nil {
		return nil, false
	}
	g := generator{root: root}
	v, ok := g.object(root, 0)
	if !ok {
		return nil, false
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, true
}

type generator struct{ root map[string]any }

// value is a value for one schema.
func (g generator) value(s map[string]any, depth int) (any, bool) {
	if depth > maxGenerateDepth {
		return nil, false
	}
	if ref, ok := s["$ref"].(string); ok {
		target, ok := g.resolve(ref)
		if !ok {
			return nil, false
		}
		return g.value(target, depth+1)
	}
	if v, ok := s["const"]; ok {
		return v, true
	}
	if v, ok := s["default"]; ok && v != nil {
		return v, true
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && ex[0] != nil {
		return ex[0], true
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0], true
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		alts, ok := s[key].([]any)
		if !ok || len(alts) == 0 || s["type"] != nil {
			continue
		}
		if key == "allOf" {
			return g.value(merge(alts), depth+1)
		}
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok && m["type"] != "null" {
				if v, ok := g.value(m, depth+1); ok {
					return v, true
				}
			}
		}
		return nil, false
	}
	switch typeOf(s) {
	case "string":
		return stringFor(s)
	case "integer":
		return number(s, true), true
	case "number":
		return number(s, false), true
	case "boolean":
		return false, true
	case "array":
		return g.array(s, depth)
	case "object":
		return g.object(s, depth)
	}
	return nil, false
}

// object has a value for each required property, and no other.
func (g generator) object(s map[string]any, depth int) (any, bool) {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	req, _ := s["required"].([]any)
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			return nil, false
		}
		p, ok := props[name].(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := g.value(p, depth+1)
		if !ok {
			return nil, false
		}
		out[name] = v
	}
	return out, true
}

// array has as few items as it may: none, or minItems of one value.
func (g generator) array(s map[string]any, depth int) (any, bool) {
	n, _ := s["minItems"].(float64)
	if n <= 0 {
		return []any{}, true
	}
	items, ok := s["items"].(map[string]any)
	if !ok || n > 10 {
		return nil, false
	}
	v, ok := g.value(items, depth+1)
	if !ok {
		return nil, false
	}
	out := make([]any, int(n))
	for i := range out {
		out[i] = v
	}
	return out, true
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

// stringFor is a string of the schema's format, or the short string, at
// least minLength long; a pattern cannot be met by guessing, so none is
// made for one.
func stringFor(s map[string]any) (any, bool) {
	switch s["format"] {
	case "uuid":
		return "00000000-0000-0000-0000-000000000000", true
	case "date-time":
		return "2026-01-01T00:00:00Z", true
	case "date":
		return "2026-01-01", true
	case "email":
		return "mcpwatch@example.com", true
	case "uri", "url", "iri":
		return "https://example.com/", true
	}
	if _, ok := s["pattern"]; ok {
		return nil, false
	}
	v := generatedString
	if n, ok := s["minLength"].(float64); ok && n > float64(len(v)) {
		if n > 64 {
			return nil, false
		}
		v += strings.Repeat("x", int(n)-len(v))
	}
	if n, ok := s["maxLength"].(float64); ok && n < float64(len(v)) {
		if n < 1 {
			return "", true
		}
		v = v[:int(n)]
	}
	return v, true
}

// number is the minimum a schema allows, else 1 (a limit or a count of 0
// is refused by many tools), within its maximum.
func number(s map[string]any, integer bool) any {
	v := 1.0
	if m, ok := s["minimum"].(float64); ok {
		v = m
	} else if m, ok := s["exclusiveMinimum"].(float64); ok {
		v = m + 1
		if !integer {
			v = m + 0.5
		}
	}
	if m, ok := s["maximum"].(float64); ok && v > m {
		v = m
	}
	if integer {
		v = math.Ceil(v)
	}
	return v
}

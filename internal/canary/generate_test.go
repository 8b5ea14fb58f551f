package canary

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// An input from a schema: what the schema gives first, else the plainest
// value of the type within its constraints, for every required property
// and no other; where none can be made, the error names the property and
// the constraint.
func TestGenerateInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, schema, want string // want "" when none can be made
		why                string // then: what the error says
	}{
		{"no schema", ``, `{}`, ""},
		{"nothing required", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{}`, ""},
		{"a short string", `{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}`, `{"q":"mcpwatch"}`, ""},
		{"const before default", `{"required":["a"],"properties":{"a":{"type":"string","const":"x","default":"y"}}}`, `{"a":"x"}`, ""},
		{"default", `{"required":["a"],"properties":{"a":{"type":"integer","default":5}}}`, `{"a":5}`, ""},
		{"examples", `{"required":["a"],"properties":{"a":{"type":"string","examples":["/vercel/next.js"]}}}`, `{"a":"/vercel/next.js"}`, ""},
		{"the first enum value", `{"required":["a"],"properties":{"a":{"type":"string","enum":["error","success"]}}}`, `{"a":"error"}`, ""},
		{"a nil UUID", `{"required":["id"],"properties":{"id":{"type":"string","format":"uuid"}}}`, `{"id":"00000000-0000-0000-0000-000000000000"}`, ""},
		{"a date", `{"required":["d"],"properties":{"d":{"type":"string","format":"date"}}}`, `{"d":"2026-01-01"}`, ""},
		{"a date-time", `{"required":["d"],"properties":{"d":{"type":"string","format":"date-time"}}}`, `{"d":"2026-01-01T00:00:00Z"}`, ""},
		{"an email", `{"required":["e"],"properties":{"e":{"type":"string","format":"email"}}}`, `{"e":"mcpwatch@example.com"}`, ""},
		{"a URI", `{"required":["u"],"properties":{"u":{"type":"string","format":"uri"}}}`, `{"u":"https://example.com/"}`, ""},
		{"minLength", `{"required":["a"],"properties":{"a":{"type":"string","minLength":10}}}`, `{"a":"mcpwatchxx"}`, ""},
		{"maxLength", `{"required":["a"],"properties":{"a":{"type":"string","maxLength":3}}}`, `{"a":"mcp"}`, ""},
		{"a pattern of one class", `{"required":["fileKey"],"properties":{"fileKey":{"type":"string","pattern":"^[a-zA-Z0-9]+$"}}}`, `{"fileKey":"mcpwatch"}`, ""},
		{"a pattern of letters, a dash and digits", `{"required":["k"],"properties":{"k":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"}}}`, `{"k":"MCP-1111"}`, ""},
		{"a prefix", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^cus_"}}}`, `{"a":"cus_"}`, ""},
		{"a prefix and a class", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14,}$"}}}`, `{"a":"cus_mcpwatchmcpwat"}`, ""},
		{"digits within lengths", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^\\d+$","minLength":2,"maxLength":4}}}`, `{"a":"1111"}`, ""},
		{"an alternation", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^(open|closed)$"}}}`, `{"a":"open"}`, ""},
		{"an optional group", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^I?\\d+[:|-]\\d+(?:;\\d+[:|-]\\d+)*$"}}}`, `{"a":"I1111111-1"}`, ""},
		{"a negated class", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^[^/]+$"}}}`, `{"a":"mcpwatch"}`, ""},
		{"a look-ahead", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^(?=x)x+$"}}}`, ``, "input property a: pattern \"^(?=x)x+$\" cannot be generated (not an expression Go's regexp reads"},
		{"a word boundary", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"\\bx"}}}`, ``, "input property a: pattern \"\\\\bx\" cannot be generated (a word boundary"},
		{"a pattern too long for maxLength", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^[a-z]{5}$","maxLength":3}}}`, ``, "input property a: pattern \"^[a-z]{5}$\" cannot be generated (its shortest match is longer than maxLength 3)"},
		{"a format against a pattern", `{"required":["a"],"properties":{"a":{"type":"string","format":"uuid","pattern":"^x"}}}`, ``, "input property a: format uuid and pattern"},
		{"minLength over maxLength", `{"required":["a"],"properties":{"a":{"type":"string","minLength":5,"maxLength":2}}}`, ``, "input property a: minLength 5 is more than maxLength 2"},
		{"the minimum", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":3,"maximum":9}}}`, `{"n":3}`, ""},
		{"an exclusive minimum", `{"required":["n"],"properties":{"n":{"type":"integer","exclusiveMinimum":0}}}`, `{"n":1}`, ""},
		{"an exclusive minimum of a number", `{"required":["n"],"properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, `{"n":0.5}`, ""},
		{"no minimum", `{"required":["n"],"properties":{"n":{"type":"number"}}}`, `{"n":1}`, ""},
		{"a maximum under 1", `{"required":["n"],"properties":{"n":{"type":"number","maximum":0}}}`, `{"n":0}`, ""},
		{"an exclusive maximum", `{"required":["n"],"properties":{"n":{"type":"integer","exclusiveMaximum":1}}}`, `{"n":0}`, ""},
		{"multipleOf", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":3,"multipleOf":5}}}`, `{"n":5}`, ""},
		{"no integer in range", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":1.2,"maximum":1.8}}}`, ``, "input property n: no integer within its minimum and maximum can be generated"},
		{"a boolean", `{"required":["b"],"properties":{"b":{"type":"boolean"}}}`, `{"b":false}`, ""},
		{"a nullable type", `{"required":["s"],"properties":{"s":{"type":["null","string"]}}}`, `{"s":"mcpwatch"}`, ""},
		{"an empty array", `{"required":["xs"],"properties":{"xs":{"type":"array","items":{"type":"string"}}}}`, `{"xs":[]}`, ""},
		{"minItems", `{"required":["xs"],"properties":{"xs":{"type":"array","minItems":2,"items":{"type":"integer"}}}}`, `{"xs":[1,1]}`, ""},
		{"minItems of patterned strings", `{"required":["ids"],"properties":{"ids":{"type":"array","minItems":1,"items":{"type":"string","pattern":"^[0-9]+:[0-9]+$"}}}}`, `{"ids":["11111111:1"]}`, ""},
		{"minItems unique", `{"required":["xs"],"properties":{"xs":{"type":"array","minItems":2,"uniqueItems":true,"items":{"type":"integer"}}}}`, ``, "input property xs: minItems 2 of uniqueItems"},
		{"a nested required object", `{"required":["parent"],"properties":{"parent":{"type":"object","required":["page_id"],"properties":{"page_id":{"type":"string","format":"uuid"},"x":{"type":"string"}}}}}`,
			`{"parent":{"page_id":"00000000-0000-0000-0000-000000000000"}}`, ""},
		{"a nested pattern", `{"required":["parent"],"properties":{"parent":{"type":"object","required":["id"],"properties":{"id":{"type":"string","pattern":"\\bx"}}}}}`, ``, "input property parent.id: pattern"},
		{"a $ref", `{"$defs":{"id":{"type":"string","format":"uuid"}},"required":["a"],"properties":{"a":{"$ref":"#/$defs/id"}}}`, `{"a":"00000000-0000-0000-0000-000000000000"}`, ""},
		{"anyOf, null first", `{"required":["a"],"properties":{"a":{"anyOf":[{"type":"null"},{"type":"integer","minimum":2}]}}}`, `{"a":2}`, ""},
		{"allOf", `{"required":["a"],"properties":{"a":{"allOf":[{"type":"object","required":["k"]},{"properties":{"k":{"type":"string"}}}]}}}`, `{"a":{"k":"mcpwatch"}}`, ""},
		{"a default the schema refuses", `{"required":["a"],"properties":{"a":{"type":"string","default":"abc","pattern":"^[0-9]+$"}}}`, ``, "does not validate against the schema"},
		{"no type", `{"required":["a"],"properties":{"a":{"description":"anything"}}}`, ``, "input property a: its schema says no type"},
		{"required but not described", `{"required":["a"],"properties":{}}`, ``, "input property a: required, but the schema does not describe it"},
		{"a remote $ref", `{"required":["a"],"properties":{"a":{"$ref":"https://example.com/s.json"}}}`, ``, "input property a: $ref \"https://example.com/s.json\" does not resolve"},
		{"a $ref to itself", `{"$defs":{"n":{"$ref":"#/$defs/n"}},"required":["a"],"properties":{"a":{"$ref":"#/$defs/n"}}}`, ``, "input property a: nested more than"},
		{"not JSON", `{`, ``, "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := GenerateInput(json.RawMessage(tc.schema))
			got := ""
			if err == nil {
				b, _ := json.Marshal(in)
				got = string(b)
				if verr := contracts.ValidateInput(json.RawMessage(tc.schema), in); verr != nil && tc.schema != "" {
					t.Errorf("%s does not validate: %v", got, verr)
				}
			}
			if got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
			if tc.want == "" && (err == nil || !strings.Contains(err.Error(), tc.why)) {
				t.Errorf("error %v, want one that says %q", err, tc.why)
			}
		})
	}
}

// Every read-only tool of the pinned servers that needs input gets one.
func TestGenerateInputPinnedServers(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{peertest.EverythingServer, peertest.MemoryServer, peertest.FilesystemServer} {
		for _, tl := range tools(t, pkg) {
			if _, err := GenerateInput(tl.InputSchema); err != nil {
				t.Errorf("%s %s: no input from %s: %v", pkg, tl.Name, tl.InputSchema, err)
			}
		}
	}
}

package canary

import (
	"encoding/json"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// An input from a schema: what the schema gives first, else the plainest
// value of the type, for every required property and no other.
func TestGenerateInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, schema, want string // want "" when none can be made
	}{
		{"no schema", ``, `{}`},
		{"nothing required", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{}`},
		{"a short string", `{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}`, `{"q":"mcpwatch"}`},
		{"const before default", `{"required":["a"],"properties":{"a":{"type":"string","const":"x","default":"y"}}}`, `{"a":"x"}`},
		{"default", `{"required":["a"],"properties":{"a":{"type":"integer","default":5}}}`, `{"a":5}`},
		{"examples", `{"required":["a"],"properties":{"a":{"type":"string","examples":["/vercel/next.js"]}}}`, `{"a":"/vercel/next.js"}`},
		{"the first enum value", `{"required":["a"],"properties":{"a":{"type":"string","enum":["error","success"]}}}`, `{"a":"error"}`},
		{"a nil UUID", `{"required":["id"],"properties":{"id":{"type":"string","format":"uuid"}}}`, `{"id":"00000000-0000-0000-0000-000000000000"}`},
		{"minLength", `{"required":["a"],"properties":{"a":{"type":"string","minLength":10}}}`, `{"a":"mcpwatchxx"}`},
		{"maxLength", `{"required":["a"],"properties":{"a":{"type":"string","maxLength":3}}}`, `{"a":"mcp"}`},
		{"the minimum", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":3,"maximum":9}}}`, `{"n":3}`},
		{"an exclusive minimum", `{"required":["n"],"properties":{"n":{"type":"integer","exclusiveMinimum":0}}}`, `{"n":1}`},
		{"no minimum", `{"required":["n"],"properties":{"n":{"type":"number"}}}`, `{"n":1}`},
		{"a maximum under 1", `{"required":["n"],"properties":{"n":{"type":"number","maximum":0}}}`, `{"n":0}`},
		{"a boolean", `{"required":["b"],"properties":{"b":{"type":"boolean"}}}`, `{"b":false}`},
		{"a nullable type", `{"required":["s"],"properties":{"s":{"type":["null","string"]}}}`, `{"s":"mcpwatch"}`},
		{"an empty array", `{"required":["xs"],"properties":{"xs":{"type":"array","items":{"type":"string"}}}}`, `{"xs":[]}`},
		{"minItems", `{"required":["xs"],"properties":{"xs":{"type":"array","minItems":2,"items":{"type":"integer"}}}}`, `{"xs":[1,1]}`},
		{"a nested required object", `{"required":["parent"],"properties":{"parent":{"type":"object","required":["page_id"],"properties":{"page_id":{"type":"string","format":"uuid"},"x":{"type":"string"}}}}}`,
			`{"parent":{"page_id":"00000000-0000-0000-0000-000000000000"}}`},
		{"a $ref", `{"$defs":{"id":{"type":"string","format":"uuid"}},"required":["a"],"properties":{"a":{"$ref":"#/$defs/id"}}}`, `{"a":"00000000-0000-0000-0000-000000000000"}`},
		{"anyOf, null first", `{"required":["a"],"properties":{"a":{"anyOf":[{"type":"null"},{"type":"integer","minimum":2}]}}}`, `{"a":2}`},
		{"allOf", `{"required":["a"],"properties":{"a":{"allOf":[{"type":"object","required":["k"]},{"properties":{"k":{"type":"string"}}}]}}}`, `{"a":{"k":"mcpwatch"}}`},
		{"a pattern", `{"required":["a"],"properties":{"a":{"type":"string","pattern":"^cus_"}}}`, ``},
		{"no type", `{"required":["a"],"properties":{"a":{"description":"anything"}}}`, ``},
		{"required but not described", `{"required":["a"],"properties":{}}`, ``},
		{"a remote $ref", `{"required":["a"],"properties":{"a":{"$ref":"https://example.com/s.json"}}}`, ``},
		{"a $ref to itself", `{"$defs":{"n":{"$ref":"#/$defs/n"}},"required":["a"],"properties":{"a":{"$ref":"#/$defs/n"}}}`, ``},
		{"not JSON", `{`, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, ok := GenerateInput(json.RawMessage(tc.schema))
			got := ""
			if ok {
				b, _ := json.Marshal(in)
				got = string(b)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Every read-only tool of the pinned servers that needs input gets one.
func TestGenerateInputPinnedServers(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{peertest.EverythingServer, peertest.MemoryServer, peertest.FilesystemServer} {
		for _, tl := range tools(t, pkg) {
			if _, ok := GenerateInput(tl.InputSchema); !ok {
				t.Errorf("%s %s: no input from %s", pkg, tl.Name, tl.InputSchema)
			}
		}
	}
}

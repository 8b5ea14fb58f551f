package daemon

import (
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// A reload of an unchanged file changes no server, also one whose contracts
// hold a JSON Schema (compiled anew at every load, as mcpwatch init's
// starter contracts have one); a changed argument or schema is a change.
func TestSameServerAcrossLoads(t *testing.T) {
	load := func(schema string) config.Server {
		f, err := contracts.ParseFile([]byte(`{"tools": {"read_graph": {"input": {}, "expect": {"jsonSchema": ` + schema + `}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return config.Server{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
			Env: map[string]string{"MEMORY_FILE_PATH": "/tmp/m.json"}, Contracts: []contracts.Contract{f.Tools["read_graph"]}}
	}
	a, b := load(`{"type": "object"}`), load(`{"type": "object"}`)
	if !sameServer(a, b) {
		t.Error("the same file loaded twice is a change")
	}
	c := load(`{"type": "object"}`)
	c.Args = append(c.Args, "--flag")
	if sameServer(a, c) {
		t.Error("a new argument is not a change")
	}
	if sameServer(a, load(`{"type": "array"}`)) {
		t.Error("a new schema is not a change")
	}
	d := load(`{"type": "object"}`)
	d.Env = map[string]string{"MEMORY_FILE_PATH": "/tmp/other.json"}
	if sameServer(a, d) {
		t.Error("a new env value is not a change")
	}
}

package contracts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// calls: auto calls only tools annotated read-only that need no argument,
// in the server's order, at most n, never one with a contract of its own.
func TestAuto(t *testing.T) {
	t.Parallel()
	tool := func(name, annotations, schema string) probe.Tool {
		tl := probe.Tool{Name: name, InputSchema: json.RawMessage(schema)}
		if annotations != "" {
			tl.Annotations = json.RawMessage(annotations)
		}
		return tl
	}
	tools := []probe.Tool{
		tool("write_file", `{"readOnlyHint":false,"destructiveHint":true}`, `{"type":"object"}`),
		tool("read_file", `{"readOnlyHint":true}`, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		tool("search", ``, `{"type":"object"}`), // no annotations: never
		tool("list_allowed_directories", `{"readOnlyHint":true}`, `{"type":"object","properties":{}}`),
		tool("read_graph", `{"readOnlyHint":true}`, `{"type":"object"}`),
		tool("get_env", `{"readOnlyHint":true}`, ``),
	}
	names := func(cs []Contract) []string {
		var out []string
		for _, c := range cs {
			if !c.Auto || string(c.Input) != "{}" || c.Expect.Status != StatusPass {
				t.Errorf("contract %+v is not an auto call with {}", c)
			}
			out = append(out, c.Tool)
		}
		return out
	}
	if got := names(Auto(tools, 1, nil)); !slices.Equal(got, []string{"list_allowed_directories"}) {
		t.Errorf("Auto(1) = %v", got)
	}
	if got := names(Auto(tools, 5, nil)); !slices.Equal(got, []string{"list_allowed_directories", "read_graph", "get_env"}) {
		t.Errorf("Auto(5) = %v", got)
	}
	skip := func(name string) bool { return name == "list_allowed_directories" }
	if got := names(Auto(tools, 1, skip)); !slices.Equal(got, []string{"read_graph"}) {
		t.Errorf("Auto(1) with a contract for the first = %v", got)
	}
}

// A refusal names every opt-in a call lacks, in one message.
func TestPermitNamesEveryOptIn(t *testing.T) {
	t.Parallel()
	bare := probe.Tool{Name: "search"}
	c := Contract{Tool: "search"}
	err := Permit(bare, c, false)
	if err == nil || !containsAll(err.Error(), `"allowSideEffects": true`, "allow_destructive_calls:", "both opt-ins") {
		t.Errorf("no opt-in: %v", err)
	}
	c.AllowSideEffects = true
	if err := Permit(bare, c, false); err == nil || containsAll(err.Error(), "allowSideEffects") {
		t.Errorf("allowSideEffects given: %v, want only the destructive opt-in named", err)
	}
	if err := Permit(bare, c, true); err != nil {
		t.Errorf("both given: %v", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// mcpwatch's own keys in a contracts file: "disabled" keeps a proposal out
// of the calls, "$comment" is for people, and an input written
// "<fill in ...>" is a placeholder that keeps the contract from being
// called until it is filled.
func TestDisabledCommentAndPlaceholders(t *testing.T) {
	t.Parallel()
	f, err := ParseFile([]byte(`{"tools":{
		"search_repositories": {"disabled": true, "$comment": "needs both opt-ins", "allowSideEffects": true,
			"input": {"query": "<fill in: string, required>", "page": 1}},
		"read_file": {"input": {"path": "<fill in: string>", "opts": {"lines": ["<fill in: string>", "x"]}}},
		"echo": {"input": {"message": "<fill in is not a placeholder without its end"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tools["search_repositories"]; !c.Disabled || !slices.Equal(c.Placeholders, []string{"input.query"}) {
		t.Errorf("proposal %+v", c)
	}
	if c := f.Tools["read_file"]; c.Disabled || !c.Pending() || !slices.Equal(c.Placeholders, []string{"input.opts.lines[0]", "input.path"}) {
		t.Errorf("pending %+v", c)
	}
	if c := f.Tools["echo"]; c.Pending() || c.Disabled {
		t.Errorf("echo %+v", c)
	}
	if _, err := ParseFile([]byte(`{"tools":{"x":{"$comment": 3}}}`)); err == nil || !strings.Contains(err.Error(), "$comment: must be a string") {
		t.Errorf("a $comment that is not a string: %v", err)
	}
}

package contracts

import (
	"encoding/json"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Auto chooses the canary calls of a server whose configuration says
// calls: auto, from the tools it listed: those annotated readOnlyHint: true
// (Needs asks no opt-in of them) whose input schema requires no argument,
// in the order the server lists them, at most n, leaving out the tools
// skip names (those with a contract of their own). Each is called with {}
// and must answer a success: not an error, and not a rejected credential.
// A tool that is not annotated read-only is never chosen: nothing else is
// called without a contract a person wrote.
func Auto(tools []probe.Tool, n int, skip func(tool string) bool) []Contract {
	var out []Contract
	for _, t := range tools {
		if len(out) >= n {
			break
		}
		if (skip != nil && skip(t.Name)) || Needs(t).SideEffects || RequiresArguments(t) {
			continue
		}
		out = append(out, Contract{
			Tool: t.Name, Input: json.RawMessage("{}"), Retry: Retry{Attempts: 1},
			Expect: Expect{Status: StatusPass}, Auto: true,
		})
	}
	return out
}

// RequiresArguments reports whether a tool's input schema names required
// properties, so that a call with {} would be refused for its input rather
// than answer. A schema that cannot be read counts as requiring some.
func RequiresArguments(t probe.Tool) bool {
	if len(t.InputSchema) == 0 {
		return false
	}
	var s struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return true
	}
	return len(s.Required) > 0
}

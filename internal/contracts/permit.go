package contracts

import (
	"errors"
	"fmt"

	"github.com/mcpwatch/mcpwatch/probe"
)

// OptIns are what calling a tool takes beyond its being listed, read from
// its annotations: the one rule of what mcpwatch may call, which a
// contract's allowSideEffects and its server's allow_destructive_calls
// answer on a schedule, and mcpwatch probe --call's flags answer by hand.
type OptIns struct {
	// SideEffects: the tool is not annotated readOnlyHint: true.
	SideEffects bool
	// Destructive: nor destructiveHint: false (the protocol's default for
	// a tool that is not read-only is destructive).
	Destructive bool
	// Why says why, in words: "is not annotated readOnlyHint: true",
	// "sends no annotations, so nothing says it only reads"; and
	// DestructiveWhy the same of the destructive hint.
	Why, DestructiveWhy string
}

// Needs says which opt-ins a call of t takes: none for a tool annotated
// read-only. Annotations that cannot be trusted (a key twice: see
// probe.Tool.Hints) count as none.
func Needs(t probe.Tool) OptIns {
	h, err := t.Hints()
	if h.ReadOnlyHint != nil && *h.ReadOnlyHint {
		return OptIns{}
	}
	n := OptIns{SideEffects: true, Why: "is not annotated readOnlyHint: true"}
	switch {
	case errors.Is(err, probe.ErrNoAnnotations):
		n.Why = "sends no annotations, so nothing says it only reads"
	case err != nil:
		n.Why = fmt.Sprintf("sends annotations mcpwatch does not trust (%v), so nothing says it only reads", err)
	}
	if h.DestructiveHint == nil || *h.DestructiveHint {
		n.Destructive = true
		n.DestructiveWhy = "is annotated destructiveHint: true"
		if h.DestructiveHint == nil {
			n.DestructiveWhy = "has no destructiveHint: false (a tool that is not read-only is destructive unless it says otherwise)"
		}
	}
	return n
}

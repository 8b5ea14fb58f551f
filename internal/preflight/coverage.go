package preflight

import (
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// Uncovered are the tools expected of server s that its contracts file
// has no contract for: the coverage --strict (--fail-on-warn) fails on.
// entry is its lock entry, locked whether it has one. mcpwatch doctor
// reads the rule here, so that it warns of what check would fail.
func Uncovered(s config.Server, entry lockstore.Entry, locked bool) []string {
	return uncovered(s, entry, locked)
}

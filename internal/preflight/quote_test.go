package preflight

import (
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A command mcpwatch suggests is pasted into a shell: a server name with a
// space or a $ in it is quoted there as lockstore quotes it (it was
// printed bare: 'mcpwatch lock --server db prod').
func TestSuggestedCommandQuotesTheName(t *testing.T) {
	s := config.Server{Name: "db prod"}
	res := &probe.Result{OK: true, Tools: []probe.Tool{{Name: "query"}}}
	p := describe(verdict.Finding{Kind: verdict.KindUnlocked}, s, res, lockstore.Diff{})
	if !strings.Contains(p.Message, "mcpwatch lock --server 'db prod'") {
		t.Errorf("suggestion %q, want the name quoted for a shell", p.Message)
	}
}

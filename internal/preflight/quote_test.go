package preflight

import (
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A command mcpwatch suggests is pasted into a shell: a server name with a
// space or a $ in it is quoted there as lockstore quotes it (it was
// printed bare: 'mcpwatch lock --server db prod').
func TestSuggestedCommandQuotesTheName(t *testing.T) {
	obs := Observation{Server: config.Server{Name: "db prod"}, Observation: runner.Observation{Result: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "query"}}}}}
	sr := judge(obs, lockstore.Entry{}, false, false, nil)
	if len(sr.Problems) != 1 || sr.Problems[0].Kind != verdict.KindUnlocked || !strings.Contains(sr.Problems[0].Message, "mcpwatch lock --server 'db prod'") {
		t.Errorf("problems %+v, want the unlocked one's suggestion with the name quoted for a shell", sr.Problems)
	}
}

package preflight

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// What the files alone decide: a contract waiting for "<fill in ...>"
// input fails under --strict only, a locked server no longer configured
// always fails; and a failing run's summary says which kinds failed.
func TestStatic(t *testing.T) {
	lock := lockstore.New()
	lock.Set("memory", lockstore.NewEntry([]lockstore.Observed{{Name: "read_graph"}, {Name: "search_nodes"}}, false))
	lock.Set("gone", lockstore.NewEntry([]lockstore.Observed{{Name: "a_tool"}}, false))
	cfg := &config.Config{Servers: []config.Server{
		{Name: "memory", Command: "node", ContractsFile: "mcp-contracts/memory.tools.json",
			Pending: []contracts.Contract{{Tool: "search_nodes", Placeholders: []string{"query"}}}},
		{Name: "fine", Command: "node"},
	}}
	in := Input{Config: cfg, ConfigSource: ".mcp.json", Lock: lock, LockPath: "mcp-tools.lock.json"}

	got := Static(in, true)
	if len(got) != 2 || got[0].Name != "gone" || got[1].Name != "memory" {
		t.Fatalf("Static, strict: %+v; want gone and memory", got)
	}
	if got[0].Verdict != verdict.KindNotConfigured || !got[0].Failed {
		t.Errorf("gone: verdict %s failed %v; want not_configured, failing", got[0].Verdict, got[0].Failed)
	}
	mem := got[1]
	if mem.Verdict != verdict.KindCallCoverage || !mem.Failed || len(mem.Problems) != 1 ||
		!strings.Contains(mem.Problems[0].Message, `1 contract not called until the "<fill in ...>" values of mcp-contracts/memory.tools.json are filled in -> search_nodes (query)`) {
		t.Errorf("memory, strict: %+v", mem)
	}
	loose := Static(in, false)
	if len(loose) != 2 || loose[1].Failed || !loose[0].Failed {
		t.Errorf("Static, not strict: %+v; want only the unconfigured server failing", loose)
	}
	if skipped := Static(Input{Config: cfg, Lock: lock, Skip: []string{"memory", "gone"}}, true); len(skipped) != 0 {
		t.Errorf("skipped servers judged: %+v", skipped)
	}

	r := &Report{Strict: true, Duration: jsondoc.Seconds(3 * time.Millisecond), Servers: got,
		Totals: Totals{Servers: 3, Failed: 2, ToolsLocked: 3, ToolsVerified: 2}}
	want := "MCP preflight FAILED in 3 ms (2 of 3 servers failed: not_configured on 1, call_coverage on 1; 2 of 3 locked tools verified, strict)"
	if s := Summary(r); s != want {
		t.Errorf("summary\n got  %s\n want %s", s, want)
	}
}

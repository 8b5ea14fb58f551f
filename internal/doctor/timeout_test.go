package doctor

import (
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// A server's worst case is what check gives its probe: the start-up
// allowance of a command that installs what it runs, --timeout otherwise,
// and a call timeout for each contract and each auto call.
func TestServerDeadline(t *testing.T) {
	t.Parallel()
	base := config.Server{Timeout: 10 * time.Second, StartTimeout: 2 * time.Minute, CallTimeout: 5 * time.Second}
	npx := base
	npx.Command, npx.Args = "npx", []string{"-y", "@modelcontextprotocol/server-memory"}
	node := base
	node.Command = "node"
	called := base
	called.URL, called.Contracts = "https://x.example/mcp", []contracts.Contract{{Tool: "a"}, {Tool: "b"}}
	auto := called
	auto.AutoCalls = 1
	for _, tc := range []struct {
		name string
		s    config.Server
		flag time.Duration
		want time.Duration
	}{
		{"npx gets its start_timeout", npx, 0, 2 * time.Minute},
		{"npx keeps it under a shorter --timeout", npx, 3 * time.Second, 2 * time.Minute},
		{"node gets its timeout", node, 0, 10 * time.Second},
		{"--timeout replaces it", node, 30 * time.Second, 30 * time.Second},
		{"two contracts", called, 0, 20 * time.Second},
		{"two contracts and an auto call", auto, 0, 25 * time.Second},
	} {
		if got := serverDeadline(tc.s, tc.flag); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

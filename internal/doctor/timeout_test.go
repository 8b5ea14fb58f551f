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

// A job (or a step) whose timeout leaves no room for the check at its
// worst, and a server that installs what it runs with a start-up
// allowance under a cold install's, are findings at the line that sets
// them, with the value to raise it to.
func TestTimeoutFindings(t *testing.T) {
	t.Parallel()
	judgeChanges(t, systemGitHub, nil, []change{
		{"a job timeout too short", "", "timeout-minutes: 15", "timeout-minutes: 5",
			&want{"timeout", githubGate, 9, "job mcp-preflight's timeout-minutes (5) leaves no room for the check: it may take up to 2m0s (2 servers,",
				"raise the timeout-minutes of job mcp-preflight to at least 7"}, ""},
		{"no job timeout: GitHub's 360 minutes", "", "    timeout-minutes: 15\n", "", nil, "timeout: job mcp-preflight has 6h0m0s, the check at worst about 2m0s"},
		{"a job timeout only the run knows", "", "timeout-minutes: 15", "timeout-minutes: ${{ inputs.minutes }}", nil,
			"timeout: job mcp-preflight's timeout ${{ inputs.minutes }} is only known when the job runs; the check may take up to 2m0s"},
		{"a step timeout too short", "", "      - name: MCP preflight\n", "      - name: MCP preflight\n        timeout-minutes: 1\n",
			&want{"timeout", githubGate, 13, `the step "MCP preflight" of job mcp-preflight has timeout-minutes 1: the check may take up to 2m0s`,
				"raise the step's timeout-minutes to at least 2, or remove it"}, ""},
		{"a server's start_timeout under a cold install", "mcpwatch.yml", "    command: npx\n", "    command: npx\n    start_timeout: 30s\n",
			&want{"startup", "mcpwatch.yml", 6, `server "memory" starts through npx, which installs what it runs first, with a start-up allowance of 30s`,
				`raise start_timeout for server "memory" (under the server, or defaults.start_timeout in an mcpwatch.yml) to at least 1m0s, or remove it for the default 2m0s`}, ""},
		{"a short --timeout leaves the start-up allowance", "", "--receipt mcp-receipt.json", "--receipt mcp-receipt.json --timeout 5s", nil,
			"start-up: memory (npx, 2m0s)"},
		{"a long --timeout", "", "--receipt mcp-receipt.json", "--receipt mcp-receipt.json --timeout 20m",
			&want{"timeout", githubGate, 9, "it may take up to 20m20s (2 servers,", "to at least 26"}, ""},
	})
}

// A start_timeout set under defaults: is named where it is set, as
// startTimeoutAt says; the server's own line is for one set nowhere.
func TestStartTimeoutFindingAtDefaults(t *testing.T) {
	t.Parallel()
	rep := newRepo(t, systemGitHub).edit(t, "mcpwatch.yml", "servers:\n", "defaults:\n  start_timeout: 45s\nservers:\n").examine(t)
	findingOf(t, rep, want{"startup", "mcpwatch.yml", 4, "with a start-up allowance of 45s", "raise start_timeout"})
}

// The check at its worst: servers longest first, in rounds as wide as its
// concurrency, stdio servers in rounds of their own concurrency.
func TestCheckWorstCase(t *testing.T) {
	t.Parallel()
	remote := func(name string) config.Server { return config.Server{Name: name, URL: "https://x.example/" + name} }
	local := func(name string) config.Server { return config.Server{Name: name, Command: "node"} }
	deadline := map[string]time.Duration{"a": time.Minute, "b": 2 * time.Minute, "c": 3 * time.Minute, "d": 4 * time.Minute}
	each := func(s config.Server) time.Duration { return deadline[s.Name] }
	for _, tc := range []struct {
		name       string
		servers    []config.Server
		all, stdio int
		want       time.Duration
	}{
		{"none", nil, 4, 4, 0},
		{"all at once", []config.Server{remote("a"), remote("b"), remote("c"), remote("d")}, 4, 4, 4 * time.Minute},
		{"two at a time", []config.Server{remote("a"), remote("b"), remote("c"), remote("d")}, 2, 2, 4*time.Minute + 2*time.Minute},
		{"one at a time", []config.Server{remote("a"), remote("b"), remote("c"), remote("d")}, 1, 1, 10 * time.Minute},
		{"stdio one at a time", []config.Server{local("a"), local("b"), remote("c"), remote("d")}, 4, 1, 4 * time.Minute},
		{"stdio one at a time, the longest", []config.Server{local("c"), local("d"), remote("a")}, 4, 1, 7 * time.Minute},
		{"a width of zero is one", []config.Server{remote("a"), remote("b")}, 0, 0, 3 * time.Minute},
	} {
		if got := checkWorstCase(tc.servers, each, tc.all, tc.stdio); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// The value a fix asks for is written as the file's key wants it, rounded
// up to the minute.
func TestFormatTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		system string
		d      time.Duration
		want   string
	}{
		{systemGitHub, 7 * time.Minute, "7"},
		{systemGitHub, 7*time.Minute + time.Second, "8"},
		{systemGitLab, 90 * time.Second, "2m"},
		{systemGitLab, time.Hour, "60m"},
	} {
		if got := formatTimeout(tc.system, tc.d); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.system, tc.d, got, tc.want)
		}
	}
}

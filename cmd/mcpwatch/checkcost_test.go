package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// What mcpwatch itself adds to a preflight's CPU, in counts rather than
// times (docs/performance.md has the times): a short-lived CLI pays every
// package's initialisation at every run, and each server costs a process.

// ownInitAllocBudget bounds the allocations the module's own packages make
// at start, before main runs, in every command: the vocabularies the
// credential classifier needs are most of it (444). Parsing the canary
// catalogue and compiling doctor's and discover's patterns at start made
// it 1,427; they now happen at their first use. A pattern or a table
// built at package level (var x = regexp.MustCompile(...)) in a package
// the binary links costs every run of check, lock and probe: build it on
// first use (sync.OnceValue) unless every command needs it.
const ownInitAllocBudget = 600

func TestOwnPackageInitCost(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(mcpwatchBin, "version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GODEBUG=inittrace=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpwatch version: %v\n%s", err, stderr.String())
	}
	perPackage, err := ownInitAllocs(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(perPackage) == 0 {
		t.Fatalf("GODEBUG=inittrace=1 listed no package of the module:\n%s", stderr.String())
	}
	total := 0
	for _, n := range perPackage {
		total += n
	}
	if total > ownInitAllocBudget {
		t.Errorf("the module's packages allocate %d times at start, over the budget of %d:\n%s",
			total, ownInitAllocBudget, describeAllocs(perPackage))
	}
	t.Logf("init allocations of the module's packages: %d (budget %d)", total, ownInitAllocBudget)
}

// ownInitAllocs reads GODEBUG=inittrace=1's lines ("init PKG @T ms, C ms
// clock, B bytes, N allocs") for this module's packages.
func ownInitAllocs(trace string) (map[string]int, error) {
	const module = "github.com/mcpwatch/mcpwatch/"
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "init" || !strings.HasPrefix(f[1], module) {
			continue
		}
		if len(f) < 10 || f[len(f)-1] != "allocs" {
			return nil, fmt.Errorf("an inittrace line of another form: %q", sc.Text())
		}
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			return nil, fmt.Errorf("inittrace line %q: %w", sc.Text(), err)
		}
		out[strings.TrimPrefix(f[1], module)] += n
	}
	return out, sc.Err()
}

func describeAllocs(perPackage map[string]int) string {
	names := make([]string, 0, len(perPackage))
	for name := range perPackage {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return perPackage[names[i]] > perPackage[names[j]] })
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "  %6d %s\n", perPackage[name], name)
	}
	return b.String()
}

// A check of legacy stdio servers starts each once: the first run detects
// the era on the process it lists (no second process), and later runs,
// with the era remembered, start one too. A shell, a second probe or a
// helper process per server would show here as more than one line.
func TestCheckOneProcessPerServer(t *testing.T) {
	t.Parallel()
	const servers = 3
	dir := t.TempDir()
	cfg, lock := map[string]any{}, map[string][]string{}
	var tools []string
	for _, tool := range probetest.DefaultTools() {
		tools = append(tools, tool.Name)
	}
	logs := make([]string, servers)
	for i := range servers {
		name := "srv" + strconv.Itoa(i+1)
		logs[i] = filepath.Join(dir, name+".spawns")
		path, args, env := probetest.Command(probetest.Config{Era: probetest.EraLegacy, SpawnLog: logs[i]})
		cfg[name] = map[string]any{"command": path, "args": args, "env": env}
		lock[name] = tools
	}
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(cfg))
	writeJSON(t, dir, "mcp-tools.lock.json", lock)

	for run, what := range []string{"first check (era detected)", "second check (era remembered)"} {
		if r := runBin(t, dir, nil, "check"); r.code != exitOK {
			t.Fatalf("%s: %s", what, r)
		}
		for i, log := range logs {
			if got := strings.Count(string(readFile(t, log)), "\n"); got != run+1 {
				t.Errorf("%s: server %d started %d processes in all, want %d (one a run)", what, i+1, got, run+1)
			}
		}
	}
}

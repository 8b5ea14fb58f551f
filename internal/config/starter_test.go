package config

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func loadIn(t *testing.T, dir, named string) (*Config, error) {
	t.Helper()
	src, err := Discover(named, dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return loadSource(src, func(string) string { return "" })
}

// A server that names no contracts file has the starter file beside the
// lock, as mcpwatch init writes it: from a .mcp.json, and from an
// mcpwatch.yml beside inline calls:; one that names a file keeps to it.
func TestStarterFiles(t *testing.T) {
	t.Parallel()
	starter := `{"tools": {
		"read_graph": {"input": {}, "expect": {"status": "pass"}},
		"search_nodes": {"input": {"query": "<fill in: string>"}},
		"create_entities": {"disabled": true, "allowSideEffects": true, "input": {}}}}`
	t.Run("client config", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			".mcp.json":                             `{"mcpServers": {"memory": {"command": "npx"}, "other": {"command": "npx"}}}`,
			"mcp-contracts/memory.tools.json":       starter,
			"mcp-contracts/not-a-server.tools.json": `{`,
		})
		cfg, err := loadIn(t, dir, "")
		if err != nil {
			t.Fatal(err)
		}
		m := cfg.Servers[0]
		if m.ContractsFile != filepath.Join(dir, "mcp-contracts", "memory.tools.json") || len(m.Contracts) != 1 ||
			len(m.Pending) != 1 || !slices.Equal(m.Proposed, []string{"create_entities"}) {
			t.Errorf("memory: file %q, contracts %+v, pending %+v, proposed %v", m.ContractsFile, m.Contracts, m.Pending, m.Proposed)
		}
		if o := cfg.Servers[1]; o.ContractsFile != "" || o.HasCalls() {
			t.Errorf("other has contracts: %+v", o)
		}
		if got, _ := cfg.ContractsTarget(cfg.Servers[1]); got != filepath.Join(dir, "mcp-contracts", "other.tools.json") {
			t.Errorf("other's target %q", got)
		}
	})
	t.Run("mcpwatch.yml", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"mcpwatch.yml": "lock: ci/tools.lock.json\nservers:\n" +
				"  memory: {command: npx, calls: {open_nodes: {input: {names: [a]}}}}\n" +
				"  named: {command: npx, contracts: mine.json}\n",
			"mine.json":                          `{"tools": {}}`,
			"ci/mcp-contracts/memory.tools.json": starter,
			"ci/mcp-contracts/named.tools.json":  `{`,
		})
		cfg, err := loadIn(t, dir, "")
		if err != nil {
			t.Fatal(err)
		}
		m := cfg.Servers[0]
		if len(m.Contracts) != 2 || m.Contracts[0].Tool != "open_nodes" || m.Contracts[1].Tool != "read_graph" {
			t.Errorf("memory's contracts %+v: want the inline and the starter ones", m.Contracts)
		}
		if n := cfg.Servers[1]; n.ContractsFile != filepath.Join(dir, "mine.json") {
			t.Errorf("named's file %q", n.ContractsFile)
		}
	})
	t.Run("errors name the file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"mcpwatch.yml":                    "servers:\n  memory: {command: npx, calls: {read_graph: {}}}\n  broken: {command: npx}\n",
			"mcp-contracts/memory.tools.json": starter,
			"mcp-contracts/broken.tools.json": `{"tools": `,
		})
		_, err := loadIn(t, dir, "")
		if err == nil {
			t.Fatal("loaded")
		}
		for _, want := range []string{"memory.tools.json: tools.read_graph: server \"memory\" has a contract for read_graph in",
			"broken.tools.json: the contracts of server \"broken\""} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
}

// Every name a client file allows has a starter file: a name that was a
// file name before keeps it (no committed file moves), any other is
// escaped, one to one and reversibly, and never leaves mcp-contracts/.
func TestStarterFileName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ä", 200)
	for name, want := range map[string]string{
		"github":                  "github",
		"my-server_2.@x":          "my-server_2.@x",
		"a.b+c":                   "a.b+c",
		"Framelink MCP for Figma": "Framelink%20MCP%20for%20Figma",
		"../etc/x":                "%2E./etc/x",
		".hidden":                 "%2Ehidden",
		"a/b":                     "a%2Fb",
		`a\b`:                     "a%5Cb",
		"süd":                     "s%C3%BCd",
		"50%":                     "50%25",
		"a:b*c?\"<>|":             "a%3Ab%2Ac%3F%22%3C%3E%7C",
		"tab\there":               "tab%09here",
		"rtl\u202eexe":            "rtl%E2%80%AEexe",
	} {
		path, ok := StarterFile("/w/mcp-tools.lock.json", name)
		want = strings.ReplaceAll(want, "/", "%2F")
		if !ok || path != "/w/mcp-contracts/"+want+".tools.json" {
			t.Errorf("StarterFile(%q) = %q, %v; want /w/mcp-contracts/%s.tools.json", name, path, ok, want)
		}
		if back, ok := serverOfStarterName(starterName(name)); !ok || back != name {
			t.Errorf("%q back from %q: %q, %v", name, starterName(name), back, ok)
		}
	}
	if _, ok := StarterFile("/w/mcp-tools.lock.json", ""); ok {
		t.Error("a file for an empty name")
	}
	// Too long to escape whole: cut, with a hash that keeps names apart.
	a, b := starterName(long+"a"), starterName(long+"b")
	if a == b || len(a+".tools.json") > 255 || !strings.Contains(a, "~") || strings.Contains(a[strings.LastIndex(a, "%")+1:], "%") {
		t.Errorf("long names: %q and %q", a, b)
	}
	if _, ok := serverOfStarterName(a); ok {
		t.Errorf("a cut name read back")
	}
}

// serverOfStarterName is the name starterName made name of: what shows
// the mapping is reversible.
func serverOfStarterName(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '%' && i+2 < len(name):
			v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		case plainNameByte(c):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0 && starterName(b.String()) == name
}

// The opt-ins and call keys of mcpwatch.yml are checked against every
// contract of the server, its starter file's included: enabling a
// proposal init wrote for an imported server takes its opt-in in
// mcpwatch.yml, and a call_schedule needs no inline contract.
func TestStarterFileOptIns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".mcp.json": `{"mcpServers": {"github": {"command": "npx"}}}`,
		"mcpwatch.yml": "imports: [.mcp.json]\nservers:\n  github: {allow_destructive_calls: [search_repositories]}\n" +
			"  own: {command: x, call_schedule: '@every 1m', allow_destructive_calls: [reset]}\n",
		"mcp-contracts/github.tools.json": `{"tools": {"search_repositories": {"allowSideEffects": true, "input": {"query": "mcp"}}}}`,
		"mcp-contracts/own.tools.json":    `{"tools": {"reset": {"allowSideEffects": true}}}`,
	})
	cfg, err := loadIn(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Servers[0]; !slices.Contains(g.AllowDestructive, "search_repositories") || len(g.Contracts) != 1 {
		t.Errorf("github: %+v", g)
	}
	// Without the starter file, the same keys are the errors they were.
	if err := os.Remove(filepath.Join(dir, "mcp-contracts", "github.tools.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "mcp-contracts", "own.tools.json")); err != nil {
		t.Fatal(err)
	}
	_, err = loadIn(t, dir, "")
	for _, want := range []string{`servers.github.allow_destructive_calls[0]: "search_repositories" has no contract, here or in the imported server's`,
		`servers.own.allow_destructive_calls[0]: "reset" has no contract`, "servers.own.call_schedule: applies to canary calls"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

package canary

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// testdataTools are tool listings of servers not pinned in testdata/peers,
// as the packages listed them (a few tools of each, cut for size).
func testdataTools(t *testing.T, name string) []probe.Tool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ts []probe.Tool
	if err := json.Unmarshal(data, &ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// The catalogue is reviewed like code, and held to its rules here: every
// entry matches one way, names an https page, and has a contract that
// parses, with an input its tool's schema takes where the tool's listing
// is at hand.
func TestCatalogueEntries(t *testing.T) {
	t.Parallel()
	listings := map[string][]probe.Tool{
		"@modelcontextprotocol/server-github":       tools(t, peertest.GitHubServer),
		"@modelcontextprotocol/server-slack":        tools(t, peertest.SlackServer),
		"@modelcontextprotocol/server-brave-search": tools(t, peertest.BraveServer),
		"@modelcontextprotocol/server-postgres":     tools(t, peertest.PostgresServer),
		"@notionhq/notion-mcp-server":               testdataTools(t, "notion-mcp-server-2.5.2"),
		"@brave/brave-search-mcp-server":            testdataTools(t, "brave-search-mcp-server-2.1.4"),
		"@upstash/context7-mcp":                     testdataTools(t, "context7-mcp-4.1.1"),
	}
	seen := map[string]bool{}
	entries := Catalogue()
	if len(entries) < 16 {
		t.Errorf("%d entries, want the 16 vetted ones", len(entries))
	}
	for _, e := range entries {
		if e.ID == "" || seen[e.ID] {
			t.Errorf("entry %q: an ID that is empty or taken", e.ID)
		}
		seen[e.ID] = true
		ways := 0
		for _, w := range []string{e.NPM, e.PyPI, e.Image, e.URL} {
			if w != "" {
				ways++
			}
		}
		if ways != 1 {
			t.Errorf("%s: matches %d ways, want one of npm, pypi, image, url", e.ID, ways)
		}
		if !strings.HasPrefix(e.Source, "https://") || e.Reads == "" || e.Server == "" || e.Tool == "" {
			t.Errorf("%s: want a tool, what it reads, whose server, and an https source: %+v", e.ID, e)
		}
		member, _ := json.Marshal(map[string]any{"tools": map[string]any{e.Tool: map[string]json.RawMessage{"input": e.Input, "expect": e.Expect}}})
		f, err := contracts.ParseFile(member)
		if err != nil {
			t.Errorf("%s: its contract does not parse: %v", e.ID, err)
			continue
		}
		if m := e.Metered; m != nil {
			if m.FreePerMonth < 0 || m.Plan == "" || !strings.HasPrefix(m.Source, "https://") {
				t.Errorf("%s: a meter names its plan, its free calls a month (0 or more) and the https page that says so: %+v", e.ID, m)
			}
			if ts, ok := listings[e.NPM]; ok {
				for _, tool := range m.Tools {
					if indexOf(ts, tool) < 0 {
						t.Errorf("%s: metered tool %s is not listed by the package", e.ID, tool)
					}
				}
			}
		}
		c := f.Tools[e.Tool]
		if c.Pending() || c.Expect.Status != contracts.StatusPass {
			t.Errorf("%s: a vetted contract is filled in and expects a success: %+v", e.ID, c)
		}
		if ts, ok := listings[e.NPM]; ok {
			i := indexOf(ts, e.Tool)
			if i < 0 {
				t.Errorf("%s: %s is not listed by the package", e.ID, e.Tool)
				continue
			}
			var schema struct {
				Required []string `json:"required"`
			}
			_ = json.Unmarshal(ts[i].InputSchema, &schema)
			var in map[string]any
			_ = json.Unmarshal(e.Input, &in)
			for _, r := range schema.Required {
				if _, ok := in[r]; !ok {
					t.Errorf("%s: the input lacks %s, which %s requires", e.ID, r, e.Tool)
				}
			}
		}
	}
	if _, err := parseCatalogue([]byte(`{"entries": [{"id": "x", "versions": ">=1.0 <two"}]}`)); err == nil || !strings.Contains(err.Error(), "entry x: versions") {
		t.Errorf("a range that does not parse: %v", err)
	}
}

func indexOf(ts []probe.Tool, name string) int {
	for i, t := range ts {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// A server is matched to its entry by the package and version range in
// its command's arguments, its image, or its URL; nothing else matches.
func TestCatalogueMatch(t *testing.T) {
	t.Parallel()
	notion := testdataTools(t, "notion-mcp-server-2.5.2")
	named := func(names ...string) []probe.Tool {
		var ts []probe.Tool
		for _, n := range names {
			ts = append(ts, probe.Tool{Name: n})
		}
		return ts
	}
	cases := []struct {
		name    string
		command string
		args    []string
		url     string
		tools   []probe.Tool
		want    string // "" none
	}{
		{"npx, pinned", "npx", []string{"-y", "@notionhq/notion-mcp-server@2.5.2"}, "", notion, "notion-mcp-server"},
		{"npx -p, pinned", "npx", []string{"-y", "-p", "@notionhq/notion-mcp-server@2.5.2", "notion-mcp-server"}, "", notion, "notion-mcp-server"},
		{"npx, a version out of range", "npx", []string{"-y", "@notionhq/notion-mcp-server@3.0.0"}, "", notion, ""},
		{"a version before the range", "npx", []string{"@notionhq/notion-mcp-server@1.7.9"}, "", notion, ""},
		{"bunx", "bunx", []string{"@notionhq/notion-mcp-server@2.0.0"}, "", notion, "notion-mcp-server"},
		{"a package whose name starts the same", "npx", []string{"@modelcontextprotocol/server-github-plus@2025.4.8"}, "", tools(t, peertest.GitHubServer), ""},
		{"date versions", "npx", []string{"-y", "@modelcontextprotocol/server-github@2025.4.8"}, "", tools(t, peertest.GitHubServer), "server-github"},
		{"the tool not listed", "npx", []string{"-y", "@notionhq/notion-mcp-server@2.5.2"}, "", named("API-post-search"), ""},
		{"docker, tagged", "docker", []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server:v0.20.1"}, "", named("get_me"), "github-mcp-server"},
		{"docker, tagged without a v", "docker", []string{"run", "-i", "ghcr.io/github/github-mcp-server:0.20.1"}, "", named("get_me"), "github-mcp-server"},
		{"docker, another image", "docker", []string{"run", "-i", "ghcr.io/example/github-mcp-server:v0.20.1"}, "", named("get_me"), ""},
		// What runs must be a release the command pins: a range, a tag, a
		// digest or no version at all is whatever the registry resolves
		// at each start, which the catalogue never vetted.
		{"npx, unpinned", "npx", []string{"-y", "@notionhq/notion-mcp-server"}, "", notion, ""},
		{"npx, a tag", "npx", []string{"-y", "@notionhq/notion-mcp-server@latest"}, "", notion, ""},
		{"npx, a range", "npx", []string{"-y", "@notionhq/notion-mcp-server@^2.5.0"}, "", notion, ""},
		{"docker, by digest", "docker", []string{"run", "-i", "ghcr.io/github/github-mcp-server@sha256:0123"}, "", named("get_me"), ""},
		{"docker, untagged", "docker", []string{"run", "-i", "ghcr.io/github/github-mcp-server"}, "", named("get_me"), ""},
		{"from node_modules, whose version the path does not say", "node", []string{"/srv/node_modules/@modelcontextprotocol/server-github/dist/index.js"}, "", tools(t, peertest.GitHubServer), ""},
		// The package must be the runner's package argument: an argument
		// that equals it, of a program that is no runner or after the
		// runner's own package, is not the server.
		{"another program, the package as an argument", "./my-server", []string{"@notionhq/notion-mcp-server@2.5.2"}, "", notion, ""},
		{"python, the package as an argument", "python3", []string{"server.py", "--note", "@notionhq/notion-mcp-server@2.5.2"}, "", notion, ""},
		{"npx running another package, the entry's as its argument", "npx", []string{"-y", "evil-mcp@1.0.0", "@notionhq/notion-mcp-server@2.5.2"}, "", notion, ""},
		{"docker, the image as the container's argument", "docker", []string{"run", "-i", "evil/image:1.0", "ghcr.io/github/github-mcp-server:v0.20.1"}, "", named("get_me"), ""},
		{"remote, a trailing slash", "", nil, "https://api.githubcopilot.com/mcp/", named("get_me"), "github-remote"},
		{"remote, case and a query", "", nil, "HTTPS://MCP.Linear.App/sse?x=1", named("list_teams"), "linear-remote"},
		{"remote, another host", "", nil, "https://mcp.linear.app.example.com/mcp", named("list_teams"), ""},
		{"remote, another path", "", nil, "https://mcp.sentry.dev/other", named("whoami"), ""},
		{"a URL is not a package", "", []string{"@notionhq/notion-mcp-server"}, "https://example.com/mcp", notion, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := Vetted(tc.command, tc.args, tc.url, tc.tools)
			if got := map[bool]string{true: e.ID, false: ""}[ok]; got != tc.want {
				t.Errorf("matched %q, want %q", got, tc.want)
			}
		})
	}
	braveArgs := []string{"-y", "@brave/brave-search-mcp-server@2.1.4"}
	if !Vouches("npx", braveArgs, "", probe.Tool{Name: "brave_web_search"}) {
		t.Error("the catalogue does not vouch for its own entry")
	}
	for _, tool := range []string{"brave_local_search", "brave_summarizer"} {
		if Vouches("npx", braveArgs, "", probe.Tool{Name: tool}) {
			t.Errorf("the catalogue vouches for %s, which it never vetted", tool)
		}
	}
	if Vouches("npx", []string{"-y", "some-other-server"}, "", probe.Tool{Name: "brave_web_search"}) {
		t.Error("the catalogue vouches for a tool of another server by its name")
	}
	// Vouching reads the runner's package argument and a pinned release,
	// as matching does: Stripe's entry covers >=0.2.0 <1.0.0.
	for _, tc := range []struct {
		command string
		args    []string
		want    bool
	}{
		{"npx", []string{"-y", "@stripe/mcp@0.3.1", "--tools=all"}, true},
		{"npx", []string{"-y", "@stripe/mcp@9.0.0", "--tools=all"}, false},
		{"npx", []string{"-y", "@stripe/mcp@^9.0.0", "--tools=all"}, false},
		{"npx", []string{"-y", "@stripe/mcp@^0.3.0", "--tools=all"}, false},
		{"npx", []string{"-y", "@stripe/mcp@next"}, false},
		{"npx", []string{"-y", "@stripe/mcp"}, false},
		{"python3", []string{"/tmp/server.py", "@stripe/mcp@0.3.1"}, false},
	} {
		if got := Vouches(tc.command, tc.args, "", probe.Tool{Name: "retrieve_balance"}); got != tc.want {
			t.Errorf("Vouches(%s %q) = %v, want %v", tc.command, tc.args, got, tc.want)
		}
	}
	// The server's own word wins: a version that annotates the tool as
	// writing, or destructive, is neither vetted nor vouched for.
	for _, ann := range []string{`{"readOnlyHint": false}`, `{"destructiveHint": true}`, `{"readOnlyHint": true, "readOnlyHint": true}`} {
		changed := probe.Tool{Name: "brave_web_search", Annotations: json.RawMessage(ann)}
		if Vouches("npx", braveArgs, "", changed) {
			t.Errorf("vouched for a tool annotated %s", ann)
		}
		if _, ok := Vetted("npx", braveArgs, "", []probe.Tool{changed}); ok {
			t.Errorf("vetted a tool annotated %s", ann)
		}
	}
}

// A script run from a node_modules folder is the package installed there,
// at the version its package.json says now: vetted within the entry's
// range, not beyond it, nor when the folder holds another package or its
// path is relative (to a working folder this does not know).
func TestCatalogueInstalledPackage(t *testing.T) {
	t.Parallel()
	github := tools(t, peertest.GitHubServer)
	root := t.TempDir()
	// install lays out dir/node_modules/@modelcontextprotocol/server-github
	// with a package.json that says name and version.
	const pkg = "@modelcontextprotocol/server-github"
	install := func(dir, name, version string) string {
		folder := filepath.Join(root, dir, "node_modules", filepath.FromSlash(pkg))
		if err := os.MkdirAll(filepath.Join(folder, "dist"), 0o755); err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(map[string]string{"name": name, "version": version})
		if err := os.WriteFile(filepath.Join(folder, "package.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(folder, "dist", "index.js")
	}
	for _, tc := range []struct {
		name, script string
		want         bool
	}{
		{"within the range", install("a", pkg, "2025.4.8"), true},
		{"beyond the range", install("b", pkg, "2026.1.0"), false},
		{"another package in its folder", install("c", "@evil/other", "2025.4.8"), false},
		{"not installed", filepath.Join(root, "d", "node_modules", pkg, "dist", "index.js"), false},
		{"a relative path", "node_modules/" + pkg + "/dist/index.js", false},
	} {
		if _, got := Vetted("node", []string{tc.script}, "", github); got != tc.want {
			t.Errorf("%s: vetted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A matched server's vetted tool is written enabled, as its entry has it,
// with the opt-in its annotations need and a comment that names the entry;
// the call is then permitted on the catalogue's word, and no other is.
func TestProposeVetted(t *testing.T) {
	t.Parallel()
	brave := testdataTools(t, "brave-search-mcp-server-2.1.4")
	args := []string{"-y", "@brave/brave-search-mcp-server@2.1.4"}
	v, ok := Vetted("npx", args, "", brave)
	if !ok {
		t.Fatal("brave-search-mcp-server 2.1.4 has no entry")
	}
	entries := ProposeVetted("brave", "b.tools.json", brave, nil, &v)
	f, err := contracts.ParseFile(File("by init", entries))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Tools["brave_web_search"]
	if c.Disabled || c.Pending() || !c.AllowSideEffects || string(c.Input) != `{"count":1,"query":"mcpwatch"}` || !slices.Contains(c.Expect.NotErrorCode, 422) {
		t.Errorf("brave_web_search: %+v", c)
	}
	if e := entries[indexOfEntry(entries, "brave_web_search")]; e.Catalogue != "brave-search" ||
		!strings.Contains(e.Comment, "entry brave-search") || !strings.Contains(e.Comment, v.Source) {
		t.Errorf("the comment does not name the entry and its source: %q", e.Comment)
	}
	tool := brave[indexOf(brave, "brave_web_search")]
	if err := contracts.Permit(tool, c, Vouches("npx", args, "", tool)); err != nil {
		t.Errorf("the vetted call is refused: %v", err)
	}
	local := brave[indexOf(brave, "brave_local_search")]
	if err := contracts.Permit(local, contracts.Contract{Tool: local.Name, AllowSideEffects: true}, Vouches("npx", args, "", local)); err == nil {
		t.Error("a tool the catalogue did not vet is called")
	}
	if c := f.Tools["brave_local_search"]; !c.Disabled {
		t.Errorf("brave_local_search is not a proposal: %+v", c)
	}
}

func indexOfEntry(es []Entry, tool string) int {
	for i, e := range es {
		if e.Tool == tool {
			return i
		}
	}
	return -1
}

// The schema in a comment shows the tool's own properties, even when its
// schema starts with shared definitions longer than the bound (Notion's).
func TestSchemaTextOwnProperties(t *testing.T) {
	t.Parallel()
	notion := testdataTools(t, "notion-mcp-server-2.5.2")
	page := notion[indexOf(notion, "API-get-block-children")]
	var compact bytes.Buffer
	if err := json.Compact(&compact, page.InputSchema); err != nil || strings.Index(compact.String(), `"block_id"`) < 600 {
		t.Fatalf("the listing no longer starts with a $defs longer than the bound: %.80s", compact.String())
	}
	got := schemaText(page)
	if !strings.HasPrefix(got, `{"type":"object","required":["block_id"],"properties":{"block_id":`) || !strings.Contains(got, "shared definitions in $defs, not shown") || len(got) > 600 {
		t.Errorf("schema text (%d bytes): %s", len(got), got)
	}
}

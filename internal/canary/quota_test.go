package canary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The default pace of a canary: a metered tool at most 5% of its free
// calls a month (in the longest month), none of a plan without free calls,
// a generated input on a tool nobody vetted once an hour, anything else
// its server's call_schedule; the slower bound wins.
func TestDefaultPace(t *testing.T) {
	t.Parallel()
	entries, err := parseCatalogue([]byte(`{"entries": [
		{"id": "search", "npm": "search-mcp", "tool": "web_search", "metered": {"freePerMonth": 2000, "plan": "Search's Free plan", "source": "https://search.example/pricing"}},
		{"id": "ask", "npm": "ask-mcp", "tool": "whoami", "metered": {"tools": ["ask"], "freePerMonth": 0, "plan": "Ask's API", "source": "https://ask.example/pricing"}},
		{"id": "tiny", "npm": "tiny-mcp", "tool": "lookup", "metered": {"freePerMonth": 200000, "plan": "Tiny's Free plan", "source": "https://tiny.example/pricing"}},
		{"id": "vetted", "npm": "vetted-mcp", "tool": "get_me"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	pass := contracts.Expect{Status: contracts.StatusPass}
	generated := contracts.Expect{Status: contracts.StatusCredentialAccepted}
	tests := []struct {
		name   string
		pkg    string
		c      contracts.Contract
		every  time.Duration
		never  bool
		saying string
	}{
		{"a metered canary", "search-mcp@1.2.3", contracts.Contract{Tool: "web_search", Expect: pass}, 7*time.Hour + 27*time.Minute, false, "at most 5% of them, 100, one every 7h27m"},
		{"another tool of the same plan", "search-mcp", contracts.Contract{Tool: "image_search", Expect: pass}, 7*time.Hour + 27*time.Minute, false, "Search's Free plan gives 2,000 free calls a month (https://search.example/pricing)"},
		{"billed from the first call", "ask-mcp", contracts.Contract{Tool: "ask", Expect: pass}, 0, true, "Ask's API bills every call of ask"},
		{"a tool of that server it does not bill", "ask-mcp", contracts.Contract{Tool: "whoami", Expect: pass}, 0, false, ""},
		{"a generated input", "other-mcp", contracts.Contract{Tool: "get_file", Expect: generated}, time.Hour, false, "generated from the schema"},
		{"a generated input on a large plan: the hour is slower", "tiny-mcp", contracts.Contract{Tool: "fetch", Expect: generated}, time.Hour, false, "generated"},
		{"a large plan alone", "tiny-mcp", contracts.Contract{Tool: "lookup", Expect: pass}, 5 * time.Minute, false, "10,000, one every 5m"},
		{"a generated input the catalogue vets", "vetted-mcp@1.0.0", contracts.Contract{Tool: "get_me", Expect: generated}, 0, false, ""},
		{"the same, unpinned: nothing vets what the registry resolves", "vetted-mcp", contracts.Contract{Tool: "get_me", Expect: generated}, time.Hour, false, "generated from the schema"},
		{"billed from the first call at any version", "ask-mcp@latest", contracts.Contract{Tool: "ask", Expect: pass}, 0, true, "Ask's API bills every call of ask"},
		{"anything else", "other-mcp", contracts.Contract{Tool: "list_things", Expect: pass}, 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := defaultPace(entries, "npx", []string{"-y", tc.pkg}, "", tc.c)
			if p.Every != tc.every || p.Never != tc.never || !strings.Contains(p.Why, tc.saying) || (tc.saying == "") != (p.Why == "") {
				t.Errorf("%+v, want every %s, never %v, saying %q", p, tc.every, tc.never, tc.saying)
			}
		})
	}
	// The shipped catalogue: Brave's web search at most 100 calls in a
	// 31-day month.
	p := DefaultPace("npx", []string{"-y", "@brave/brave-search-mcp-server"}, "", contracts.Contract{Tool: "brave_web_search", Expect: pass})
	if p.Every < 31*24*time.Hour/100 || p.Every > 31*24*time.Hour/100+time.Minute {
		t.Errorf("Brave: %+v", p)
	}
	if !Metered("npx", []string{"@modelcontextprotocol/server-brave-search"}, "", "brave_local_search") || Metered("npx", []string{"@modelcontextprotocol/server-github"}, "", "search_repositories") {
		t.Error("Metered: Brave's reference server's tools are, GitHub's are not")
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{7*time.Hour + 27*time.Minute: "7h27m", time.Hour: "1h", 5 * time.Minute: "5m", 30 * time.Second: "30s", 90 * time.Second: "1m30s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

// What init writes says how often each canary will be called: a metered
// one by its plan, a held one how to opt in, a generated input hourly.
func TestProposedCommentsSayThePace(t *testing.T) {
	t.Parallel()
	entry := func(id string) *CatalogueEntry {
		for _, e := range Catalogue() {
			if e.ID == id {
				return &e
			}
		}
		t.Fatalf("no entry %s", id)
		return nil
	}
	readOnly := json.RawMessage(`{"readOnlyHint":true}`)
	for _, tc := range []struct {
		tools  []probe.Tool
		vetted *CatalogueEntry
		tool   string
		want   string
	}{
		{[]probe.Tool{{Name: "brave_web_search"}}, entry("brave-search"), "brave_web_search", "Metered: Brave Search API's Free plan gives 2,000 free calls a month (https://brave.com/search/api/): by default mcpwatch spends at most 5% of them, 100, one every 7h27m, unless this contract names"},
		{[]probe.Tool{{Name: "perplexity_search", Annotations: readOnly}}, entry("perplexity-mcp-server"), "perplexity_search", `bills every call of perplexity_search (https://docs.perplexity.ai/getting-started/pricing): not called unless its contract names a schedule ("schedule": "@every 24h", say)`},
		{[]probe.Tool{{Name: "get_file", Annotations: readOnly, InputSchema: json.RawMessage(`{"type":"object","required":["key"],"properties":{"key":{"type":"string"}}}`)}}, nil, "get_file", "at most once every 1h unless it names"},
	} {
		for _, e := range ProposeVetted("s", "f", tc.tools, nil, tc.vetted) {
			if e.Tool == tc.tool && !strings.Contains(e.Comment, tc.want) {
				t.Errorf("%s: $comment %q lacks %q", tc.tool, e.Comment, tc.want)
			}
		}
	}
}

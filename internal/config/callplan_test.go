package config

import (
	"strings"
	"testing"
)

// How often each canary is called, as every command reads it: a metered
// tool at most 5% of its free calls, a generated input once an hour, a
// tool billed from the first call never; a contract's own schedule wins,
// and a call_schedule slower than the pace stays. It holds for a contract
// a person wrote, in a .mcp.json server's starter file or in an
// mcpwatch.yml, as for init's.
func TestCallPlans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".mcp.json": `{"mcpServers": {
			"brave": {"command": "npx", "args": ["-y", "@brave/brave-search-mcp-server@2.1.4"], "env": {"BRAVE_API_KEY": "${BRAVE_API_KEY}"}},
			"perplexity": {"command": "npx", "args": ["-y", "@perplexity-ai/mcp-server"], "env": {"PERPLEXITY_API_KEY": "${PERPLEXITY_API_KEY}"}},
			"figma": {"command": "npx", "args": ["-y", "figma-developer-mcp", "--stdio"]}}}`,
		"mcpwatch.yml": "imports: [.mcp.json]\nservers:\n  slow: {command: x, call_schedule: '@every 12h', calls: {brave_web_search: {}}}\n",
		// Written by hand: the catalogue's tool, another of the same plan,
		// and one with its own schedule.
		"mcp-contracts/brave.tools.json": `{"tools": {
			"brave_web_search": {"input": {"query": "mcpwatch"}},
			"brave_news_search": {"input": {"query": "mcpwatch"}},
			"brave_image_search": {"input": {"query": "mcpwatch"}, "schedule": "@every 1h"}}}`,
		"mcp-contracts/perplexity.tools.json": `{"tools": {
			"perplexity_ask": {"input": {"messages": []}, "expect": {"status": "credentialAccepted"}},
			"perplexity_search": {"input": {"query": "mcpwatch"}, "schedule": "0 9 * * 1"}}}`,
		"mcp-contracts/figma.tools.json": `{"tools": {
			"get_figma_data": {"input": {"fileKey": "mcpwatch"}, "expect": {"status": "credentialAccepted"}},
			"get_me": {}}}`,
	})
	cfg, err := loadIn(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]CallPlan{}
	held := map[string][]string{}
	for _, s := range cfg.Servers {
		for _, p := range s.CallPlans() {
			plans[s.Name+"/"+p.Tool] = p
		}
		for _, c := range s.Held {
			held[s.Name] = append(held[s.Name], c.Tool)
		}
	}
	for key, want := range map[string]struct {
		schedule string
		perMonth int
		why      string
	}{
		"brave/brave_web_search":       {"@every 7h27m", 96, "Brave Search API's Free plan gives 2,000 free calls a month"},
		"brave/brave_news_search":      {"@every 7h27m", 96, "at most 5% of them, 100"},
		"brave/brave_image_search":     {"@every 1h", 720, "its contract's own schedule"},
		"slow/brave_web_search":        {"@every 12h", 60, ""}, // not the catalogue's server: its own call_schedule
		"perplexity/perplexity_ask":    {"", 0, "bills every call of perplexity_ask"},
		"perplexity/perplexity_search": {"0 9 * * 1", 4, "its contract's own schedule"},
		"figma/get_figma_data":         {"@every 1h", 720, "an input generated from the schema"},
		"figma/get_me":                 {"@every 5m", 8640, ""},
	} {
		p := plans[key]
		if p.Schedule != want.schedule || p.PerMonth() != want.perMonth || !strings.Contains(p.Why, want.why) || (want.why == "") != (p.Why == "") {
			t.Errorf("%s: %+v (%d a month), want %q (%d a month) saying %q", key, p, p.PerMonth(), want.schedule, want.perMonth, want.why)
		}
	}
	if got := strings.Join(held["perplexity"], ","); got != "perplexity_ask" {
		t.Errorf("held: %v, want perplexity_ask alone", held)
	}
	for _, s := range cfg.Servers {
		for _, c := range s.Contracts {
			if s.Name == "perplexity" && c.Tool == "perplexity_ask" {
				t.Error("a held contract is among those called")
			}
		}
	}
}

// A schedule a contract names is checked at load, as the daemon parses
// it, in a contracts file and inline alike: the error names the file and
// the key.
func TestContractScheduleChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mcpwatch.yml": "servers:\n  a: {command: x, contracts: a.tools.json}\n  b: {command: x, calls: {t: {schedule: 'every hour'}}}\n",
		"a.tools.json": `{"tools": {"t": {"schedule": "@every -1h"}, "u": {"schedule": 5}}}`,
	})
	_, err := loadIn(t, dir, "")
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`a.tools.json: tools.t.schedule: "@every -1h" is not a schedule (the interval must be positive)`,
		`a.tools.json: tools.u: schedule: want how often the daemon calls the tool`,
		`mcpwatch.yml: servers.b.calls.t.schedule: "every hour" is not a schedule`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

package canary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

func tools(t *testing.T, pkg string) []probe.Tool {
	t.Helper()
	ts, err := peertest.LoadTools(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// passed is a sample call that answered text.
func passed(tool, text string, took time.Duration) Sample {
	content, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	return Sample{Outcome: contracts.Outcome{Tool: tool, Passed: true, Duration: took,
		Attempts: []contracts.Attempt{{Passed: true, Call: &probe.CallResult{Tool: tool, Answered: true, Content: content}}}}}
}

func statuses(entries []Entry) map[string]Status {
	out := map[string]Status{}
	for _, e := range entries {
		out[e.Tool] = e.Status
	}
	return out
}

// What mcpwatch init proposes for the pinned servers, from the tools they
// list: read-only tools that need no input and answered are enabled (the
// shape of their answer recorded), read-only ones that need input wait for
// it, tools whose names read as queries but that are not annotated
// read-only are proposed disabled with both opt-ins named, and writes are
// never written.
func TestProposeRealServers(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		got := Propose("memory", "mcp-contracts/memory.tools.json", tools(t, peertest.MemoryServer),
			map[string]Sample{"read_graph": passed("read_graph", `{"entities": [], "relations": []}`, 300*time.Millisecond)})
		// read_graph watches the server: the tools that need input get
		// inputs generated from their schemas, disabled beside it.
		want := map[string]Status{"read_graph": Enabled, "search_nodes": Proposed, "open_nodes": Proposed}
		if s := statuses(got); !equalMaps(s, want) {
			t.Errorf("statuses %v, want %v", s, want)
		}
		if in := got[1].Input; in["query"] != "mcpwatch" || got[1].Expect != `{"status": "credentialAccepted"}` {
			t.Errorf("search_nodes: input %v, expect %s", in, got[1].Expect)
		}
		if got[0].Shape != "object" {
			t.Errorf("read_graph's shape %q, want object", got[0].Shape)
		}
	})
	t.Run("filesystem", func(t *testing.T) {
		t.Parallel()
		got := statuses(Propose("filesystem", "f", tools(t, peertest.FilesystemServer),
			map[string]Sample{"list_allowed_directories": passed("list_allowed_directories", "Allowed directories:\n/srv", time.Second)}))
		if got["list_allowed_directories"] != Enabled || got["read_file"] != Proposed || got["get_file_info"] != Proposed {
			t.Errorf("statuses %v", got)
		}
		for _, write := range []string{"write_file", "edit_file", "move_file", "create_directory"} {
			if _, ok := got[write]; ok {
				t.Errorf("%s, which writes, is in the starter file", write)
			}
		}
	})
	t.Run("github, no annotations", func(t *testing.T) {
		t.Parallel()
		got := Propose("github", "mcp-contracts/github.tools.json", tools(t, peertest.GitHubServer), nil)
		s := statuses(got)
		for _, tool := range []string{"search_repositories", "get_file_contents", "list_issues", "search_code"} {
			if s[tool] != Proposed {
				t.Errorf("%s: %q, want proposed", tool, s[tool])
			}
		}
		for _, tool := range []string{"create_issue", "push_files", "merge_pull_request", "fork_repository"} {
			if _, ok := s[tool]; ok {
				t.Errorf("%s is proposed; its name does not read as a query", tool)
			}
		}
		for _, e := range got {
			if !e.AllowSideEffects || !strings.Contains(e.Comment, "allow_destructive_calls: of server github") ||
				!strings.Contains(e.Comment, `remove "disabled"`) || !strings.Contains(e.Comment, "sends no annotations") {
				t.Errorf("%s: the comment does not name every opt-in in one place: %q", e.Tool, e.Comment)
			}
		}
	})
	t.Run("a read-only tool too slow or failing is proposed", func(t *testing.T) {
		t.Parallel()
		slow := passed("get-env", "{}", 9*time.Second)
		failed := Sample{Outcome: contracts.Outcome{Tool: "get-tiny-image", Reason: contracts.ReasonIsError, Message: "status: expected success"}}
		s := statuses(Propose("everything", "f", tools(t, peertest.EverythingServer), map[string]Sample{"get-env": slow, "get-tiny-image": failed}))
		if s["get-env"] != Proposed || s["get-tiny-image"] != Proposed || s["get-resource-links"] != Proposed {
			t.Errorf("statuses %v: slow, failed and never called ones must be proposed", s)
		}
		// No tool that needs no input watches the server: the first
		// read-only one that needs input is called with a generated one,
		// the others are written disabled.
		if s["echo"] != Enabled || s["get-sum"] != Proposed {
			t.Errorf("echo %q, get-sum %q: want the first enabled with a generated input, the next disabled", s["echo"], s["get-sum"])
		}
	})
}

// The starter file is a contracts file mcpwatch reads: a proposal is
// disabled, a read-only tool that needs input is pending until its
// placeholders are filled, an enabled one asserts the shape recorded.
func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	entries := Propose("memory", "m.tools.json", tools(t, peertest.MemoryServer),
		map[string]Sample{"read_graph": passed("read_graph", `{"entities": []}`, time.Millisecond)})
	entries = append(entries, Propose("github", "g.tools.json", tools(t, peertest.GitHubServer), nil)[:1]...)
	raw := File("written by mcpwatch init", entries)
	f, err := contracts.ParseFile(raw)
	if err != nil {
		t.Fatalf("the starter file does not parse: %v\n%s", err, raw)
	}
	if c := f.Tools["read_graph"]; c.Disabled || c.Pending() || len(c.Expect.JSONSchema) == 0 {
		t.Errorf("read_graph %+v", c)
	}
	if c := f.Tools["search_nodes"]; !c.Disabled || c.Pending() || string(c.Input) != `{"query":"mcpwatch"}` || c.Expect.Status != contracts.StatusCredentialAccepted {
		t.Errorf("search_nodes %+v", c)
	}
	if c := f.Tools["create_or_update_file"]; c.Tool != "" {
		t.Errorf("a write is in the file: %+v", c)
	}
	for name, c := range f.Tools {
		if strings.HasPrefix(name, "search_") && name != "search_nodes" && (!c.Disabled || !c.AllowSideEffects) {
			t.Errorf("%s %+v: a proposal must be disabled, with its opt-in", name, c)
		}
	}
	if again := File("written by mcpwatch init", entries); string(again) != string(raw) {
		t.Errorf("the same entries give another file")
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	gh := tools(t, peertest.GitHubServer)
	ok := &probe.Result{OK: true, Tools: gh}
	search := contracts.Contract{Tool: "search_repositories", Input: json.RawMessage(`{"query":"mcp"}`), AllowSideEffects: true}
	proposal := search
	proposal.Disabled = true
	pending := contracts.Contract{Tool: "search_nodes", Placeholders: []string{"input.query"}}
	memory := &probe.Result{OK: true, Tools: tools(t, peertest.MemoryServer)}
	cases := []struct {
		name    string
		server  Server
		watched bool
		note    string
	}{
		{"a contract watches it", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, Result: ok, Contracts: []contracts.Contract{search}},
			true, "search_repositories (its contract) watches env:GITHUB_PERSONAL_ACCESS_TOKEN"},
		{"the catalogue's contract", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, Result: ok, Contracts: []contracts.Contract{search},
			Catalogue: map[string]string{"search_repositories": "server-github"}},
			true, "search_repositories (vetted: the catalogue's entry server-github) watches env:GITHUB_PERSONAL_ACCESS_TOKEN"},
		{"only proposals", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, Result: ok, Contracts: []contracts.Contract{proposal}, ContractsFile: "g.tools.json"},
			false, NoCanary + ": none of its tools is annotated read-only; proposed, disabled in g.tools.json: search_repositories"},
		{"nothing to propose", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, Result: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "create_issue"}}}},
			false, NoCanary + ": none of its 1 tools is annotated read-only, and none reads as a query"},
		{"from the lock, no contract", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, FromLock: true,
			Result: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "search_repositories"}, {Name: "create_issue"}}}},
			false, NoCanary + ": none of its 2 locked tools has a contract that is called"},
		{"from the lock, a contract", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, FromLock: true,
			Result: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "search_repositories"}}}, Contracts: []contracts.Contract{search}},
			true, "search_repositories (its contract) watches env:GITHUB_PERSONAL_ACCESS_TOKEN"},
		{"from the lock, calls: auto", Server{Name: "github", Credentials: []string{"env:GITHUB_PERSONAL_ACCESS_TOKEN"}, FromLock: true, AutoCalls: 1,
			Result: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "search_repositories"}}}},
			true, "calls: auto watches env:GITHUB_PERSONAL_ACCESS_TOKEN, if the server annotates a tool read-only"},
		{"calls: auto", Server{Name: "memory", Credentials: []string{"env:MEMORY_TOKEN"}, Result: memory, AutoCalls: 1},
			true, "read_graph (calls: auto) watches env:MEMORY_TOKEN"},
		{"pending", Server{Name: "memory", Credentials: []string{"env:MEMORY_TOKEN"}, Result: memory, Contracts: []contracts.Contract{pending}, ContractsFile: "m.tools.json"},
			false, NoCanary + " yet: search_nodes waits for its input"},
		{"no credential", Server{Name: "memory", Result: memory, AutoCalls: 1},
			false, "given no credential: nothing for a canary to watch (its canaries still check that the tools answer)"},
		{"empty credential", Server{Name: "slack", Credentials: []string{"env:SLACK_BOT_TOKEN"},
			Result: &probe.Result{Reason: probe.ReasonCredentialMissing, Error: "env:SLACK_BOT_TOKEN is empty"}},
			false, NoCanary + ": the credential is empty (env:SLACK_BOT_TOKEN is empty)"},
		{"not probed", Server{Name: "pg", Result: &probe.Result{Reason: probe.ReasonExited, Error: "initialize: exited"}},
			false, NoCanary + ": the server could not be probed (exited: initialize: exited)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Watch(tc.server)
			if r.Watched != tc.watched || !strings.Contains(r.Note, tc.note) {
				t.Errorf("row %+v, want watched %v and a note with %q", r, tc.watched, tc.note)
			}
		})
	}
	table := Table([]Row{Watch(cases[0].server), Watch(Server{Name: "x\x1b[31m", Result: memory})})
	if strings.Contains(table, "\x1b") || !strings.HasPrefix(table, "SERVER") || strings.Count(table, "\n") != 3 {
		t.Errorf("table:\n%s", table)
	}
}

// The table counts the calls a month the daemon makes of each server at
// its schedules, and says when a canary is paced or held, with why.
func TestWatchCallsAMonth(t *testing.T) {
	t.Parallel()
	memory := &probe.Result{OK: true, Tools: append(tools(t, peertest.MemoryServer), probe.Tool{Name: "ask"})}
	perMonth := map[string]int{"search_nodes": 96, "read_graph": 8640, "open_nodes": 720, "ask": 0}
	why := map[string]string{"search_nodes": "a plan's free calls", "open_nodes": "a generated input", "ask": "billed from the first call"}
	plan := func(c contracts.Contract) (int, string) { return perMonth[c.Tool], why[c.Tool] }
	c := func(tool string) contracts.Contract {
		return contracts.Contract{Tool: tool, Input: json.RawMessage(`{}`)}
	}
	creds := []string{"env:MEMORY_TOKEN"}
	for _, tc := range []struct {
		name  string
		s     Server
		calls int
		note  string
	}{
		{"contracts and calls: auto", Server{Name: "m", Credentials: creds, Result: memory, Plan: plan, AutoCalls: 1,
			Contracts: []contracts.Contract{c("search_nodes"), c("open_nodes")}}, 96 + 720 + 8640, "search_nodes (its contract) watches env:MEMORY_TOKEN; paced: a plan's free calls"},
		{"a held contract", Server{Name: "m", Credentials: creds, Result: memory, Plan: plan, ContractsFile: "m.tools.json",
			Contracts: []contracts.Contract{c("ask")}}, 0, NoCanary + " by default: ask (billed from the first call); to call it anyway, give its contract in m.tools.json a \"schedule\""},
		{"disabled and pending ones are not called", Server{Name: "m", Credentials: creds, Result: memory, Plan: plan,
			Contracts: []contracts.Contract{{Tool: "search_nodes", Disabled: true}, {Tool: "open_nodes", Placeholders: []string{"input.names"}}}}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Watch(tc.s)
			if r.CallsAMonth != tc.calls || !strings.Contains(r.Note, tc.note) {
				t.Errorf("row %+v, want %d calls and a note with %q", r, tc.calls, tc.note)
			}
		})
	}
	table := Table([]Row{{Server: "brave", Credential: "env:BRAVE_API_KEY", Canary: "brave_web_search", CallsAMonth: 96, Note: "n"}, {Server: "report", CallsAMonth: 8640}})
	if !strings.Contains(table, "CALLS/MONTH") || !strings.Contains(table, "96 ") || !strings.Contains(table, "8,640") {
		t.Errorf("table:\n%s", table)
	}
}

func equalMaps(a, b map[string]Status) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The canary's cut is sanitize.Line: 300 bytes that are not UTF-8 cut to
// 200 are 200 of them and "…" (it gave "…" alone).
func TestCutIsSanitizeLine(t *testing.T) {
	s := strings.Repeat("\x80", 300)
	if got := cut(s, 200); len(got) != 200+len("…") {
		t.Errorf("cut(300 bytes, 200) is %d bytes, want 203", len(got))
	}
}

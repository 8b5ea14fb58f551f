package canary

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A server's own words come after its prefix: slack_list_channels reads
// as a query, and so does brave_web_search; slack_post_message does not.
func TestProposePrefixedNames(t *testing.T) {
	t.Parallel()
	slack := statuses(Propose("slack", "f", tools(t, peertest.SlackServer), nil))
	for _, tool := range []string{"slack_list_channels", "slack_get_users", "slack_get_channel_history"} {
		if slack[tool] != Proposed {
			t.Errorf("%s: %q, want proposed", tool, slack[tool])
		}
	}
	for _, tool := range []string{"slack_post_message", "slack_reply_to_thread", "slack_add_reaction"} {
		if _, ok := slack[tool]; ok {
			t.Errorf("%s, a write, is proposed", tool)
		}
	}
	brave := statuses(Propose("brave", "f", tools(t, peertest.BraveServer), nil))
	if brave["brave_web_search"] != Proposed || brave["brave_local_search"] != Proposed {
		t.Errorf("brave: %v", brave)
	}
	for name, want := range map[string]bool{"web_search": true, "delete_search": false, "getUser": true, "query": true,
		"create_search_index": false, "reset": false, "": false} {
		if ReadsAsQuery(name) != want {
			t.Errorf("ReadsAsQuery(%q) = %v", name, !want)
		}
	}
}

// Extend adds what is new at the end of "tools" and keeps every byte of
// what was there: a person's edits, their own contracts, and contracts of
// tools the server no longer lists.
func TestExtend(t *testing.T) {
	t.Parallel()
	mem := tools(t, peertest.MemoryServer)
	samples := map[string]Sample{"read_graph": passed("read_graph", `{"entities": []}`, time.Millisecond)}
	entries := Propose("memory", "m", mem, samples)
	first := File("by init", entries[:1])

	// Nothing edited: the rest is added, the first kept as it was.
	out, m, err := Extend(first, entries, names(mem))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), strings.TrimSuffix(string(first), "\n  }\n}\n")) || len(m.Added) != 2 || len(m.Edited) != 0 {
		t.Fatalf("merge %+v:\n%s", m, out)
	}
	if again, m2, _ := Extend(out, entries, names(mem)); string(again) != string(out) || len(m2.Added) != 0 || len(m2.Kept) != 3 {
		t.Errorf("a second extend changed the file or added %v", m2.Added)
	}

	// A person's edit, a contract of their own and one for a tool gone.
	edited := strings.Replace(string(out), `"input": {"query": "mcpwatch"}`, `"input": {"query": "alice"}`, 1)
	if edited == string(out) {
		t.Fatalf("the generated input is not in the file:\n%s", out)
	}
	edited = strings.Replace(edited, `"tools": {`, `"tools": {"create_entities": {"allowSideEffects": true, "input": {"entities": []}}, "old_tool": {},`, 1)
	out2, m3, err := Extend([]byte(edited), entries, names(mem))
	if err != nil {
		t.Fatal(err)
	}
	if string(out2) != edited || strings.Join(m3.Edited, ",") != "create_entities,search_nodes" || strings.Join(m3.Unlisted, ",") != "old_tool" {
		t.Errorf("merge %+v", m3)
	}

	// An empty "tools" and a file that is not a contracts file.
	if out, _, err := Extend([]byte(`{"tools":{}}`), entries[:1], nil); err != nil || !strings.Contains(string(out), `"read_graph": {`) {
		t.Errorf("into an empty tools: %v\n%s", err, out)
	}
	if _, _, err := Extend([]byte(`{"tools": [`), entries, nil); err == nil {
		t.Error("a broken file was extended")
	}
	if f, err := contracts.ParseFile(out2); err != nil || len(f.Tools) != 5 {
		t.Errorf("the extended file: %v, %d tools", err, len(f.Tools))
	}
}

func names(ts []probe.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

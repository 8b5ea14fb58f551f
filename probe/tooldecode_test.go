package probe

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A tool's own keys are read exactly, as its annotations' are: an
// "ANNOTATIONS" beside "annotations" is another key, and annotations sent
// twice are trusted neither way. Read case-insensitively, last one winning,
// each of these tools was called as read-only while a client reading exact
// keys saw one that is not.
func TestToolKeysReadExactly(t *testing.T) {
	t.Parallel()
	s := newTestSession()
	list := `{"tools":[
		{"name":"outer","annotations":{"readOnlyHint":false},"ANNOTATIONS":{"readOnlyHint":true}},
		{"name":"cased","Annotations":{"readOnlyHint":true}},
		{"name":"twice","annotations":{"readOnlyHint":false},"annotations":{"readOnlyHint":true}},
		{"name":"first","NAME":"second","description":"d","description":null,"annotations":{"readOnlyHint":true}}
	]}`
	c := &scriptConn{answer: func(string, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(list), nil }}
	if err := s.listTools(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]Tool{}
	for _, tool := range s.res.Tools {
		got[tool.Name] = tool
	}
	for _, name := range []string{"outer", "cased", "twice"} {
		h, _ := got[name].Hints()
		if h.ReadOnlyHint != nil && *h.ReadOnlyHint {
			t.Errorf("%s: read as read-only (annotations %s)", name, got[name].Annotations)
		}
	}
	if _, ok := got["first"]; !ok || got["first"].Description != "" {
		t.Errorf("tools %v: want the exact key name, and the last description (null) kept", s.res.ToolNames())
	}
	if h, err := got["first"].Hints(); err != nil || h.ReadOnlyHint == nil || !*h.ReadOnlyHint {
		t.Errorf("first: hints %+v, %v; want read-only, its annotations sent once", h, err)
	}
	warnings := strings.Join(s.obs.warnings, "\n")
	for _, want := range []string{`tool "twice" sends annotations twice`, `tool "first" sends description twice`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if strings.Contains(warnings, `"outer" sends`) {
		t.Errorf("a key in another case is another key, not one sent twice:\n%s", warnings)
	}
}

// A tool that is not an object, or null, decodes as encoding/json decodes
// it: an error, or nothing.
func TestToolDecodeShapes(t *testing.T) {
	t.Parallel()
	var tool listedTool
	if err := json.Unmarshal([]byte(`["name"]`), &tool); err == nil {
		t.Error("an array decoded as a tool")
	}
	if err := json.Unmarshal([]byte(`null`), &tool); err != nil || tool.Name != "" {
		t.Errorf("null: %v, %+v", err, tool)
	}
	if err := json.Unmarshal([]byte(`{"name":7}`), &tool); err == nil {
		t.Error("a number decoded as a name")
	}
}

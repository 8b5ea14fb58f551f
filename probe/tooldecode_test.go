package probe

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
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

// The one-pass reader decodes a tool as encoding/json decodes the same
// object into a map, exact keys and the last of a repeated member winning,
// but for annotations sent twice, which are dropped: any valid JSON in,
// the same fields or an error out of both.
func FuzzToolDecode(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`,
		`{"name":"a\u0062","title":null,"annotations":{"readOnlyHint":true},"x":[1,{"y":"}"}]}`,
		` { "na\u006de" : "esc\"aped" , "outputSchema" : null , "name" : "\ud83d\ude00" } `,
		`{"name":7}`, `{"name":"x","annotations":1,"annotations":2}`, `null`, `[]`, `"s"`, `{}`,
		`{"description":"bad \udc00 half","inputSchema":"s","Name":"N"}`, "{\"name\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var got listedTool
		gotErr := json.Unmarshal(data, &got)

		var members map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &members)
		var want Tool
		if wantErr == nil && members != nil {
			for key, dst := range map[string]*string{"name": &want.Name, "title": &want.Title, "description": &want.Description} {
				if v, ok := members[key]; ok && wantErr == nil {
					wantErr = json.Unmarshal(v, dst)
				}
			}
			want.InputSchema, want.OutputSchema, want.Annotations = members["inputSchema"], members["outputSchema"], members["annotations"]
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		if slices.Contains(got.twice, "annotations") {
			want.Annotations = nil
		}
		if !reflect.DeepEqual(got.Tool, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got.Tool, want)
		}
	})
}

package lockstore

import (
	"os"
	"strings"
	"testing"
)

func TestMarshalForms(t *testing.T) {
	schema, desc := Fingerprint([]byte(`{"type":"object"}`)), DescriptionHash("Run a query")
	l := New()
	l.Set("report", Entry{Tools: []ToolLock{{Name: "list_report_dates"}, {Name: "fetch_daily_report"}}})
	l.Set("search", Entry{Tools: []ToolLock{
		{Name: "suggest", Schema: schema},
		{Name: "query", Schema: schema, Description: desc},
		{Name: "ping"},
		{Name: "about", Description: desc},
	}})
	l.Set("empty", Entry{})
	want := `{
  "empty": [],
  "report": [
    "fetch_daily_report",
    "list_report_dates"
  ],
  "search": {
    "about": {"description": "` + desc + `"},
    "ping": {},
    "query": {"description": "` + desc + `", "schema": "` + schema + `"},
    "suggest": {"schema": "` + schema + `"}
  }
}
`
	if got := string(l.Marshal()); got != want {
		t.Errorf("Marshal:\n%s\nwant:\n%s", got, want)
	}
	back, err := Parse(l.Marshal())
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v", err)
	}
	for _, server := range l.Servers() {
		a, _ := l.Entry(server)
		b, _ := back.Entry(server)
		if !a.Equal(b) {
			t.Errorf("server %s: wrote %v, read back %v", server, a, b)
		}
	}
}

func TestMarshalEmptyLock(t *testing.T) {
	if got := string(New().Marshal()); got != "{}\n" {
		t.Errorf("New().Marshal() = %q, want %q", got, "{}\n")
	}
	var zero Lock
	if got := string(zero.Marshal()); got != "{}\n" {
		t.Errorf("zero Lock Marshal() = %q, want %q", got, "{}\n")
	}
}

func TestMarshalKeepsTheFinalNewlineAsRead(t *testing.T) {
	for _, in := range []string{"{\n  \"a\": []\n}", "{\n  \"a\": []\n}\n"} {
		l, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		l.Set("b", Entry{Tools: []ToolLock{{Name: "x"}}})
		got := string(l.Marshal())
		if strings.HasSuffix(got, "\n") != strings.HasSuffix(in, "\n") {
			t.Errorf("read %q, wrote %q: the final newline changed", in, got)
		}
	}
}

func TestPythonStringQuoting(t *testing.T) {
	// Expected values are what Python 3's json.dumps gives (ensure_ascii=True).
	cases := map[string]string{
		"plain_name":    `"plain_name"`,
		`quote"back\`:   `"quote\"back\\"`,
		"<html>&amp;":   `"<html>&amp;"`,
		"a/b":           `"a/b"`,
		"tab\tnl\ncr\r": `"tab\tnl\ncr\r"`,
		"\b\f\x00\x1f":  `"\b\f\u0000\u001f"`,
		"del\x7f":       `"del\u007f"`,
		"café":          `"caf\u00e9"`,
		"日本":            `"\u65e5\u672c"`,
		"emoji😀":        `"emoji\ud83d\ude00"`,
	}
	for in, want := range cases {
		if got := string(appendPythonString(nil, in)); got != want {
			t.Errorf("appendPythonString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSetOneServerKeepsEveryOtherServersBytes(t *testing.T) {
	// mcpwatch lock --server gamma: alpha and beta keep their hand-made
	// formatting; only gamma's lines change.
	data, err := os.ReadFile("testdata/hand-edited.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	l.Set("gamma", NewEntry([]Observed{{Name: "new_tool"}}, false))
	want := `{
  "alpha": ["b_tool",   "a_tool"],
  "beta": {
        "query": {"schema": "sha256:1111111111111111111111111111111111111111111111111111111111111111"}
    },
  "gamma": [
    "new_tool"
  ]
}
`
	if got := string(l.Marshal()); got != want {
		t.Errorf("Marshal after Set(gamma):\n%s\nwant:\n%s", got, want)
	}
}

func TestSetAnEqualEntryKeepsItsBytes(t *testing.T) {
	data, err := os.ReadFile("testdata/hand-edited.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	l.Set("alpha", NewEntry([]Observed{{Name: "a_tool"}, {Name: "b_tool"}, {Name: "a_tool"}}, false))
	if got := string(l.Marshal()); !strings.Contains(got, `"alpha": ["b_tool",   "a_tool"],`) {
		t.Errorf("relocking alpha unchanged rewrote it:\n%s", got)
	}
	l.Set("alpha", NewEntry([]Observed{{Name: "a_tool"}}, false))
	if got := string(l.Marshal()); !strings.Contains(got, "\"alpha\": [\n    \"a_tool\"\n  ],") {
		t.Errorf("relocking alpha with one tool fewer kept the old bytes:\n%s", got)
	}
}

func TestRemove(t *testing.T) {
	l, err := Parse([]byte(`{"a": ["x"], "b": ["y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	l.Remove("a")
	l.Remove("not-there")
	if got, want := string(l.Marshal()), "{\n  \"b\": [\"y\"]\n}"; got != want {
		t.Errorf("after Remove(a): %q, want %q", got, want)
	}
	if _, ok := l.Entry("a"); ok {
		t.Error("Entry(a) still present after Remove")
	}
}

package lockstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseSeedLockRoundTripsByteForByte(t *testing.T) {
	for _, fixture := range []string{"testdata/seed.lock.json", "testdata/seed-two-servers.lock.json"} {
		t.Run(filepath.Base(fixture), func(t *testing.T) {
			data, err := os.ReadFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			e, ok := l.Entry("report")
			if !ok || !slices.Equal(e.Names(), []string{"fetch_daily_report", "list_report_dates"}) {
				t.Fatalf("Entry(report) = %v, %v", e, ok)
			}
			if got := l.Marshal(); string(got) != string(data) {
				t.Errorf("Marshal changed the Python preflight's bytes:\n got %q\nwant %q", got, data)
			}
		})
	}
}

func TestParseRebuiltSeedLockIsTheSameBytes(t *testing.T) {
	// Not from raw bytes this time: a lock built by Set must render exactly as
	// the Python preflight wrote it, final newline aside.
	data, err := os.ReadFile("testdata/seed-two-servers.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	l := New()
	names := []Observed{{Name: "list_report_dates"}, {Name: "fetch_daily_report"}}
	l.Set("report-remote", NewEntry(names, false))
	l.Set("report", NewEntry(names, false))
	if got, want := string(l.Marshal()), string(data)+"\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	hash := DescriptionHash("x")
	cases := []struct {
		name, in, want string
	}{
		{"empty file", "", "lock line 1, column 1: not valid JSON: unexpected end of JSON input; " + fixJSON},
		{"syntax error points at the bad byte", "{\n  \"report\": [\"a\",\n  }", `lock line 3, column 3: not valid JSON: invalid character '}' looking for beginning of value; ` + fixJSON},
		{"trailing garbage", "{}\nx", `lock line 2, column 1: not valid JSON: invalid character 'x' after top-level value; ` + fixJSON},
		{"top level is a list", `  ["a"]`, `lock line 1, column 3: a lock is a JSON object of server names, found an array; ` + fixJSON},
		{"byte order mark", "\xef\xbb\xbf{}", `lock line 1, column 1: the file starts with a UTF-8 byte order mark, which Python's json.load rejects; save it as UTF-8 without a BOM`},
		{"invalid utf-8", "{\"a\xff\": []}", `lock line 1, column 4: the file is not valid UTF-8; ` + fixJSON},
		{"server twice", "{\n  \"a\": [],\n  \"a\": []\n}", `lock line 3, column 3: server "a": listed twice (first at line 2, column 3); keep one entry`},
		{"entry is a string", `{"a": "tool"}`, `lock line 1, column 7: server "a": an entry is a list of tool names ["tool_a", "tool_b"] or an object keyed by tool name, found a string; ` + fixJSON},
		{"entry is null", `{"a": null}`, `lock line 1, column 7: server "a": an entry is a list of tool names ["tool_a", "tool_b"] or an object keyed by tool name, found null; ` + fixJSON},
		{"number in the name list", "{\"a\": [\"x\", \n 7]}", `lock line 2, column 2: server "a": the tool list holds a number, not a tool name; ` + fixJSON},
		{"tool value not an object", `{"a": {"t": []}}`, `lock line 1, column 13: server "a": tool "t": expected {"description": "sha256:…", "schema": "sha256:…"} or {}, found an array; ` + fixJSON},
		{"tool twice", `{"a": {"t": {}, "t": {}}}`, `lock line 1, column 17: server "a": tool "t" is listed twice; keep one entry`},
		{"unknown key", `{"a": {"t": {"schem": "` + hash + `"}}}`, `lock line 1, column 14: server "a": tool "t": unknown key "schem" (known: "description", "schema"); ` + fixJSON},
		{"hash not a string", `{"a": {"t": {"schema": 1}}}`, `lock line 1, column 24: server "a": tool "t": "schema" must be a string; regenerate the entry with "mcpwatch lock --fingerprints --server a", or drop the key to lock the name only`},
		{"malformed hash", `{"my server": {"t": {"description": "md5:abc"}}}`, `lock line 1, column 37: server "my server": tool "t": "description" must be "sha256:" and 64 lowercase hex digits; regenerate the entry with "mcpwatch lock --fingerprints --server 'my server'", or drop the key to lock the name only`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse([]byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, %v; want a *ParseError", tc.in, l, err)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tc.in, err, tc.want)
			}
		})
	}
}

func TestParseRefusesTheSeedsFailedProbeEntry(t *testing.T) {
	// An early version of the Python preflight wrote a failed probe into the lock as
	// {"error": ...}; it must never be read as a tool called "error".
	path := filepath.Join("testdata", "seed-failed-probe.lock.json")
	_, err := Read(path)
	want := `lock file testdata/seed-failed-probe.lock.json:4:16: server "stalled": this entry records a failed probe, not the expected tools; delete this entry and run "mcpwatch lock --server stalled" once the server answers`
	if err == nil || err.Error() != want {
		t.Errorf("Read error\n got %v\nwant %s", err, want)
	}
}

func TestParseAcceptsWhatTheSeedCanWrite(t *testing.T) {
	// The Python preflight sorts names but keeps duplicates; hand edits leave
	// lists unsorted. Both read as the same set of tools.
	l, err := Parse([]byte(`{"b": ["z", "a", "z"], "a": [], "c": {"t": {}, "s": {"schema": "` + Fingerprint(nil) + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Servers(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Servers() = %v", got)
	}
	if e, _ := l.Entry("b"); !slices.Equal(e.Names(), []string{"a", "z"}) {
		t.Errorf("Entry(b) = %v, want a, z", e.Names())
	}
	if e, ok := l.Entry("a"); !ok || len(e.Tools) != 0 {
		t.Errorf("Entry(a) = %v, %v; want an empty entry that exists", e, ok)
	}
	e, _ := l.Entry("c")
	want := []ToolLock{{Name: "s", Schema: Fingerprint(nil)}, {Name: "t"}}
	if !slices.Equal(e.Tools, want) {
		t.Errorf("Entry(c) = %v, want %v", e.Tools, want)
	}
}

func TestReadMissingFileWrapsErrNotExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	_, err := Read(path)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v; want an error wrapping fs.ErrNotExist", err)
	}
}

func TestEntryIsACopy(t *testing.T) {
	l := New()
	l.Set("s", Entry{Tools: []ToolLock{{Name: "a"}}})
	e, _ := l.Entry("s")
	e.Tools[0].Name = "changed"
	if again, _ := l.Entry("s"); again.Tools[0].Name != "a" {
		t.Errorf("changing a returned Entry changed the lock: %v", again)
	}
}

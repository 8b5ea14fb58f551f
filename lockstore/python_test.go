package lockstore

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// These tests hold mcpwatch's lock to the Python preflight:
// whatever one writes, the other reads.

func python(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	out, err := exec.Command(py, append([]string{"-c", script}, args...)...).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return out
}

func TestPythonWrittenLockIsReadAndRewrittenUnchanged(t *testing.T) {
	servers := map[string][]string{
		"report":      {"list_report_dates", "fetch_daily_report"},
		"unicode-é":   {"café", "日本", "emoji😀", `quote"back\slash`, "<html>&amp;", "tab\tnl\n", "del\x7f"},
		"empty":       {},
		"Upper_first": {"b", "B", "a"},
	}
	arg, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	// The Python preflight's writer: json.dump(observed, open(LOCK, "w"), indent=2, sort_keys=True),
	// with its names sorted as its probe sorts them.
	const writer = `import json, sys
observed = {k: sorted(v) for k, v in json.loads(sys.argv[1]).items()}
sys.stdout.write(json.dumps(observed, indent=2, sort_keys=True))`
	pyBytes := python(t, writer, string(arg))

	l, err := Parse(pyBytes)
	if err != nil {
		t.Fatalf("Parse(python's lock): %v\n%s", err, pyBytes)
	}
	if got := l.Marshal(); string(got) != string(pyBytes) {
		t.Errorf("rewriting python's lock changed it:\n got %q\nwant %q", got, pyBytes)
	}

	// Built afresh rather than read: the same bytes, plus our final newline.
	fresh := New()
	for server, names := range servers {
		tools := make([]Observed, len(names))
		for i, n := range names {
			tools[i] = Observed{Name: n}
		}
		fresh.Set(server, NewEntry(tools, false))
	}
	if got, want := string(fresh.Marshal()), string(pyBytes)+"\n"; got != want {
		t.Errorf("fresh lock differs from python's:\n got %q\nwant %q", got, want)
	}
}

func TestSeedScriptReadsBothEntryForms(t *testing.T) {
	l := New()
	l.Set("plain", NewEntry([]Observed{{Name: "fetch_daily_report"}, {Name: "list_report_dates"}}, false))
	l.Set("rich", NewEntry([]Observed{
		{Name: "query", Description: "Run a query", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "suggest", Description: "Suggest", InputSchema: json.RawMessage(`{}`)},
	}, true))
	l.Set("mixed-empty", Entry{})
	path := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	// The Python preflight's verification loop, verbatim but for the probe: observed is
	// given, and each failure is printed as it prints it.
	const checker = `import json, sys
LOCK = sys.argv[1]
observed = json.loads(sys.argv[2])
expected = json.load(open(LOCK))
failures = []
for name, want in expected.items():
    got = observed.get(name)
    if isinstance(got, dict):
        failures.append(f"{name}: probe failed ({got['error']})")
        continue
    missing = [t for t in want if t not in (got or [])]
    if missing:
        failures.append(f"{name}: {len(missing)}/{len(want)} tools missing -> {missing}")
print(json.dumps(failures))`
	cases := []struct {
		name     string
		observed map[string][]string
		want     []string
	}{
		{"all present", map[string][]string{"plain": {"fetch_daily_report", "list_report_dates"}, "rich": {"query", "suggest", "extra"}}, []string{}},
		{"one missing from each form", map[string][]string{"plain": {"list_report_dates"}, "rich": {"suggest"}}, []string{
			"plain: 1/2 tools missing -> ['fetch_daily_report']",
			"rich: 1/2 tools missing -> ['query']",
		}},
		{"credential missing", map[string][]string{}, []string{
			"plain: 2/2 tools missing -> ['fetch_daily_report', 'list_report_dates']",
			"rich: 2/2 tools missing -> ['query', 'suggest']",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			arg, err := json.Marshal(tc.observed)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := json.Unmarshal(python(t, checker, path, string(arg)), &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Python preflight failures = %q, want %q", got, tc.want)
			}
		})
	}
}

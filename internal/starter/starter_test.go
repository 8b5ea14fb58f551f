package starter

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestMain(m *testing.M) {
	probetest.RunIfChild()
	goleak.VerifyTestMain(m)
}

// stdioServer is a .mcp.json entry running this test binary as a
// probetest server.
func stdioServer(cfg probetest.Config, env map[string]string) map[string]any {
	path, args, e := probetest.Command(cfg)
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": path, "args": args, "env": e}
}

func writeMCP(t *testing.T, dir string, servers map[string]map[string]any) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, dir string) *config.Config {
	t.Helper()
	src, err := config.Discover("", dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := imports.LoadSource(src, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func run(t *testing.T, dir string) (*Result, string) {
	t.Helper()
	cfg := load(t, dir)
	lookup := func(name string) (string, bool) {
		if name == "REPORT_API_TOKEN" {
			return "s3cret-token-value", true
		}
		return "", false
	}
	r := Run(t.Context(), cfg, Options{Dir: dir, Preflight: preflight.Options{Timeout: 30 * time.Second, Lookup: lookup}})
	var b bytes.Buffer
	if err := WriteText(&b, r, dir); err != nil {
		t.Fatal(err)
	}
	return r, b.String()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// init on real servers: a healthy one given a credential, whose read-only
// tool that needs no input is sampled and enabled, and one that exits at
// once, which is neither locked nor given a file. Run again, it keeps the
// lock entry and a person's edits, and adds only a tool the server gained.
func TestInit(t *testing.T) {
	dir := t.TempDir()
	// A tool that reads as a query but is not annotated read-only, and
	// one that writes.
	query := probetest.Tool{Name: "get_usage", InputSchema: map[string]any{"type": "object"}}
	write := probetest.Tool{Name: "reset_cache", InputSchema: map[string]any{"type": "object"}}
	report := probetest.Config{Tools: append(probetest.DefaultTools(), query, write)}
	writeMCP(t, dir, map[string]map[string]any{
		"report": stdioServer(report, map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}),
		"broken": stdioServer(probetest.Config{Behavior: probetest.ExitAtOnce}, nil),
	})

	r, text := run(t, dir)
	if !r.Failed() {
		t.Errorf("a server exited at once and init did not fail:\n%s", text)
	}
	lock, err := lockstore.Read(filepath.Join(dir, "mcp-tools.lock.json"))
	if err != nil {
		t.Fatalf("no lock: %v\n%s", err, text)
	}
	if got := lock.Servers(); len(got) != 1 || got[0] != "report" {
		t.Errorf("locked %v, want report alone (a failed probe is never locked)", got)
	}
	file := filepath.Join(dir, config.StarterDir, "report.tools.json")
	f, err := contracts.ParseFile([]byte(read(t, file)))
	if err != nil {
		t.Fatalf("the starter file: %v", err)
	}
	if c := f.Tools["list_report_dates"]; c.Disabled || c.Pending() || len(c.Expect.JSONSchema) == 0 && c.Tool == "" {
		t.Errorf("list_report_dates %+v: want enabled", c)
	}
	// list_report_dates watches the server: fetch_daily_report gets an
	// input generated from its schema, disabled beside it, and nothing is
	// left pending for check --strict to fail on.
	if c := f.Tools["fetch_daily_report"]; c.Pending() || !c.Disabled || string(c.Input) != `{"date":"mcpwatch"}` || c.Expect.Status != contracts.StatusCredentialAccepted {
		t.Errorf("fetch_daily_report %+v: want disabled, with a generated input", c)
	}
	if c := f.Tools["get_usage"]; !c.Disabled || !c.AllowSideEffects {
		t.Errorf("get_usage %+v: want proposed, disabled, with its opt-in", c)
	}
	if _, ok := f.Tools["reset_cache"]; ok {
		t.Error("reset_cache, a write, is in the file")
	}
	if _, err := os.Stat(filepath.Join(dir, config.StarterDir, "broken.tools.json")); err == nil {
		t.Error("a file for the server that could not be probed")
	}
	for _, want := range []string{
		"lock mcp-tools.lock.json: added report",
		"report: wrote mcp-contracts/report.tools.json (1 enabled, 2 proposed, disabled)",
		"broken: none written: the server could not be probed",
		"broken: could not be probed (exited)",
		"list_report_dates (its contract) watches env:REPORT_API_TOKEN",
		canary.NoCanary + ": the server could not be probed (exited",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "s3cret-token-value") || strings.Contains(read(t, file), "s3cret-token-value") {
		t.Error("the credential's value was printed or written")
	}
	// check reads the file: the contract is the server's.
	if s := load(t, dir).Servers[1]; s.Name != "report" || len(s.Contracts) != 1 || len(s.Pending) != 0 || len(s.Proposed) != 2 {
		t.Errorf("the configuration's report: %+v", s)
	}

	// A person gives the generated input a real date; the server gains a
	// tool and the broken one is removed.
	edited := strings.Replace(read(t, file), `"date": "mcpwatch"`, `"date": "2026-08-01"`, 1)
	if edited == read(t, file) {
		t.Fatalf("no generated input to edit:\n%s", read(t, file))
	}
	if err := os.WriteFile(file, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	lockBefore := read(t, filepath.Join(dir, "mcp-tools.lock.json"))
	report.Tools = append(report.Tools, probetest.Tool{Name: "list_regions", InputSchema: map[string]any{"type": "object"}, Annotations: probetest.ReadOnly()})
	writeMCP(t, dir, map[string]map[string]any{
		"report": stdioServer(report, map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}),
	})
	r, text = run(t, dir)
	if r.Failed() {
		t.Fatalf("second run failed:\n%s", text)
	}
	after := read(t, file)
	if !strings.HasPrefix(after, strings.TrimSuffix(edited, "\n  }\n}\n")) || !strings.Contains(after, `"list_regions": {`) {
		t.Errorf("the file after the second run does not keep the edit and add list_regions:\n%s", after)
	}
	if got := read(t, filepath.Join(dir, "mcp-tools.lock.json")); got != lockBefore {
		t.Errorf("the lock entry of report changed:\n%s", got)
	}
	for _, want := range []string{
		"lock mcp-tools.lock.json: unchanged",
		"kept as they were: report",
		"report: added to mcp-contracts/report.tools.json (1 enabled)",
		"kept 3 contracts as they were, edits included: fetch_daily_report",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the second run's text lacks %q:\n%s", want, text)
		}
	}
	// A third run with nothing new changes nothing.
	if _, text = run(t, dir); !strings.Contains(text, "nothing new for mcp-contracts/report.tools.json") || read(t, file) != after {
		t.Errorf("third run:\n%s", text)
	}
}

// A contracts file that is not one is left as it is, and init says so.
func TestInitBrokenFile(t *testing.T) {
	dir := t.TempDir()
	writeMCP(t, dir, map[string]map[string]any{"report": stdioServer(probetest.Config{}, nil)})
	file := filepath.Join(dir, config.StarterDir, "report.tools.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"tools": {}, "extra": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Discover("", dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imports.LoadSource(src, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "report.tools.json") {
		t.Fatalf("loading with a broken starter file: %v", err)
	}
}

// Server names are the configuration's, which a cloned repository
// chooses: the lock's "added" and "kept as they were" lines escape them,
// as every other line does (an OSC 52 would set the clipboard, an OSC 0
// the window title, a C1 CSI pass as a CSI).
func TestWriteTextEscapesServerNames(t *testing.T) {
	t.Parallel()
	clipboard, title, csi := "clip\x1b]52;c;ZWNobyBwd25lZA==\x07", "title\x1b]0;owned\x07", "csi\u009b2J"
	r := &Result{Lock: "mcp-tools.lock.json", LockOutcome: "written", Locked: []string{clipboard, csi}, LockKept: []string{title, csi}}
	var b bytes.Buffer
	if err := WriteText(&b, r, ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, raw := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(out, raw) {
			t.Errorf("%q reached the output raw:\n%s", raw, out)
		}
	}
	for _, want := range []string{`added clip\x1b]52;c;ZWNobyBwd25lZA==\a, csi\u009b2J`, `kept as they were: title\x1b]0;owned\a, csi\u009b2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// A server named as its README names it ("Framelink MCP for Figma":
// spaces, any character a client file allows) gets its starter file, an
// escaped name that every command reads back as the server's; its
// read-only tool whose input needs a pattern gets an input that matches.
// Where no input can be made, the table says which constraint of which
// property stood in the way.
func TestInitServerNameWithSpaces(t *testing.T) {
	dir := t.TempDir()
	const name = "Framelink MCP for Figma"
	figma := func(pattern string) probetest.Config {
		return probetest.Config{Tools: []probetest.Tool{{Name: "get_figma_data", Annotations: probetest.ReadOnly(), InputSchema: map[string]any{
			"type": "object", "required": []any{"fileKey"},
			"properties": map[string]any{"fileKey": map[string]any{"type": "string", "pattern": pattern}},
		}}}}
	}
	env := map[string]string{"FIGMA_API_KEY": "${REPORT_API_TOKEN}"}
	writeMCP(t, dir, map[string]map[string]any{
		name:        stdioServer(figma("^[a-zA-Z0-9]+$"), env),
		"lookahead": stdioServer(figma("^(?=[a-z])[a-z0-9]+$"), env),
	})
	r, text := run(t, dir)
	if r.Failed() {
		t.Fatalf("init failed:\n%s", text)
	}
	file := filepath.Join(dir, config.StarterDir, "Framelink%20MCP%20for%20Figma.tools.json")
	f, err := contracts.ParseFile([]byte(read(t, file)))
	if err != nil {
		t.Fatalf("the starter file: %v\n%s", err, text)
	}
	if c := f.Tools["get_figma_data"]; c.Disabled || string(c.Input) != `{"fileKey":"mcpwatch"}` || c.Expect.Status != contracts.StatusCredentialAccepted {
		t.Errorf("get_figma_data %+v: want enabled, with an input that matches the pattern", c)
	}
	var s config.Server
	for _, srv := range load(t, dir).Servers {
		if srv.Name == name {
			s = srv
		}
	}
	if s.ContractsFile != file || len(s.Contracts) != 1 {
		t.Errorf("the configuration's server %q: file %q, %d contracts", s.Name, s.ContractsFile, len(s.Contracts))
	}
	for _, want := range []string{
		"get_figma_data (its contract) watches env:FIGMA_API_KEY",
		`get_figma_data: input property fileKey: pattern "^(?=[a-z])[a-z0-9]+$" cannot be generated`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "annotated read-only") {
		t.Errorf("the text says no tool is annotated read-only:\n%s", text)
	}
}

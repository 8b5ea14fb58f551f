package preflight_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const secret = "s3cret-t0ken-value-9f8e7d"

// secretRun is a run whose servers hold the secret in env and headers, and
// echo it back: on stderr, in a tool description, and in a header a wrong
// token is sent with.
func secretRun(t *testing.T) *preflight.Report {
	t.Helper()
	echoing := probetest.DefaultTools()
	echoing[1].Description = "List report dates (key " + secret + ")"
	okSrv := probetest.NewServer(probetest.Config{Behavior: probetest.TokenGated, Token: secret, Tools: echoing})
	ok := httptest.NewServer(okSrv)
	t.Cleanup(func() { ok.Close(); okSrv.Close() })
	deniedSrv := probetest.NewServer(probetest.Config{Behavior: probetest.Unauthorized401, Token: "another-token-entirely"})
	denied := httptest.NewServer(deniedSrv)
	t.Cleanup(func() { denied.Close(); deniedSrv.Close() })

	bearer := map[string]string{"Authorization": "Bearer ${MCPWATCH_TEST_SECRET}"}
	servers := map[string]map[string]any{
		"remote": {"url": ok.URL, "transport": "http", "headers": bearer},
		"denied": {"url": denied.URL, "transport": "http", "headers": bearer},
		"echo": {"command": "/bin/sh", "args": []string{"-c", `echo "auth failed for token $REPORT_API_TOKEN" >&2; exit 3`},
			"env": map[string]string{"REPORT_API_TOKEN": "${MCPWATCH_TEST_SECRET}"}},
		"literal": testServer(probetest.Config{Behavior: probetest.TokenGated}, map[string]string{"REPORT_API_TOKEN": secret}),
	}
	lock := `{"remote": ["fetch_daily_report", "list_report_dates"], "denied": ["fetch_daily_report"],
		"echo": ["fetch_daily_report"], "literal": ["fetch_daily_report", "gone"]}`
	lookup := func(name string) (string, bool) {
		if name == "MCPWATCH_TEST_SECRET" {
			return secret, true
		}
		return os.LookupEnv(name)
	}
	// A bound only: every server answers or exits, however slowly a loaded
	// machine starts them.
	return check(t, servers, lock, preflight.Options{Lookup: lookup, Timeout: time.Minute})
}

func TestNoSecretInAnyOutput(t *testing.T) {
	r := secretRun(t)
	if r.OK {
		t.Fatal("want a failed run")
	}
	echo := serverReport(t, r, "echo")
	assertInOrder(t, strings.Join(echo.Failures()[0].Details, "\n"), "| auth failed for token <redacted>")
	remote := serverReport(t, r, "remote")
	if remote.Failed || remote.Probe.Tools[1].Description != "List report dates (key <redacted>)" {
		t.Errorf("remote: failed %v, description %q", remote.Failed, remote.Probe.Tools[1].Description)
	}

	receipt := filepath.Join(t.TempDir(), "receipt.json")
	if err := preflight.WriteReceipt(receipt, r); err != nil {
		t.Fatal(err)
	}
	receiptData, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"receipt": receiptData}
	for name, write := range map[string]func(io.Writer, *preflight.Report) error{
		"text": preflight.WriteText, "json": preflight.WriteJSON, "junit": preflight.WriteJUnit,
		"annotations": preflight.WriteAnnotations, "markdown": preflight.WriteMarkdown,
	} {
		var buf bytes.Buffer
		if err := write(&buf, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outputs[name] = buf.Bytes()
	}
	for name, out := range outputs {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("%s holds the secret:\n%s", name, out)
		}
		if !bytes.Contains(out, []byte("literal")) {
			t.Errorf("%s does not name the servers:\n%s", name, out)
		}
	}

	// The receipt is the full record: handshake, versions, tools with
	// schemas, timings, verdicts.
	var rec map[string]any
	if err := json.Unmarshal(receiptData, &rec); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema_version": 2`, `"kind": "mcpwatch.preflight"`, `"protocol_version":`, `"inputSchema":`, `"timings":`, `"verdict": "credential_rejected"`, `"started":`, `"Authorization": "Bearer ${MCPWATCH_TEST_SECRET}"`} {
		if !bytes.Contains(receiptData, []byte(want)) {
			t.Errorf("receipt lacks %s", want)
		}
	}
}

// junit is the JUnit XML schema, as CI readers need it.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    string   `xml:"tests,attr"`
	Failures string   `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    string `xml:"tests,attr"`
		Failures string `xml:"failures,attr"`
		Errors   string `xml:"errors,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// ValidateJUnit decodes JUnit XML and checks what the schema requires: the
// element nesting, the required attributes, numbers where numbers go, and
// counts that agree with the testcases.
func validateJUnit(t *testing.T, data []byte) junitDoc {
	t.Helper()
	allowed := map[string][]string{
		"":           {"testsuites"},
		"testsuites": {"testsuite"},
		"testsuite":  {"properties", "testcase", "system-out", "system-err"},
		"properties": {"property"},
		"property":   {},
		"testcase":   {"failure", "error", "skipped", "system-out", "system-err"},
		"failure":    {}, "error": {}, "skipped": {}, "system-out": {}, "system-err": {},
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	stack := []string{""}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			parent := stack[len(stack)-1]
			if !contains(allowed[parent], el.Name.Local) {
				t.Errorf("<%s> inside <%s> is not JUnit", el.Name.Local, parent)
			}
			stack = append(stack, el.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}

	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	number := func(what, v string) float64 {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			t.Errorf("%s = %q, want a non-negative number", what, v)
		}
		return f
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	failures := 0
	for _, c := range s.Cases {
		if c.Name == "" || c.Classname == "" {
			t.Errorf("testcase without name or classname: %+v", c)
		}
		number("testcase time", c.Time)
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" || c.Failure.Type == "" {
				t.Errorf("testcase %s: failure without message or type", c.Name)
			}
		}
	}
	if s.Name == "" || int(number("tests", s.Tests)) != len(s.Cases) || int(number("failures", s.Failures)) != failures ||
		number("errors", s.Errors) != 0 || doc.Tests != s.Tests || doc.Failures != s.Failures {
		t.Errorf("suite %q counts tests=%s failures=%s errors=%s (top %s/%s), want %d testcases, %d failing",
			s.Name, s.Tests, s.Failures, s.Errors, doc.Tests, doc.Failures, len(s.Cases), failures)
	}
	number("testsuite time", s.Time)
	return doc
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestWriteJUnit(t *testing.T) {
	r := check(t, map[string]map[string]any{
		"report":  testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
		"healthy": testServer(probetest.Config{}, nil),
	}, `{"report": ["fetch_daily_report", "list_report_dates"], "healthy": ["list_report_dates"]}`, preflight.Options{})
	var buf bytes.Buffer
	if err := preflight.WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	doc := validateJUnit(t, buf.Bytes())
	cases := doc.Suites[0].Cases
	if len(cases) != 2 || cases[0].Name != "healthy" || cases[0].Failure != nil || cases[1].Failure == nil {
		t.Fatalf("testcases: %+v", cases)
	}
	if got, want := cases[1].Failure.Message, "2/2 tools missing -> fetch_daily_report, list_report_dates"; got != want {
		t.Errorf("failure message %q, want %q", got, want)
	}

	// A run that could not start is still a JUnit file with its reason.
	buf.Reset()
	failed := preflight.Failed(io.ErrUnexpectedEOF, "mcpwatch.yml", "mcp-tools.lock.json", "test", time.Now())
	if err := preflight.WriteJUnit(&buf, failed); err != nil {
		t.Fatal(err)
	}
	doc = validateJUnit(t, buf.Bytes())
	if c := doc.Suites[0].Cases; len(c) != 1 || c[0].Failure == nil || c[0].Failure.Message != "unexpected EOF" {
		t.Errorf("failed run: %+v", c)
	}
}

func TestWriteGitHub(t *testing.T) {
	r := check(t, map[string]map[string]any{
		"report": testServer(probetest.Config{Behavior: probetest.Scoped}, map[string]string{"REPORT_API_TOKEN": "x", "REPORT_SCOPE": "read"}),
		"extra":  testServer(probetest.Config{Tools: withTools("export|csv")}, nil),
	}, `{"report": ["fetch_daily_report", "list_report_dates"], "extra": ["list_report_dates"]}`, preflight.Options{})

	var ann bytes.Buffer
	if err := preflight.WriteAnnotations(&ann, r); err != nil {
		t.Fatal(err)
	}
	want := "::notice title=MCP preflight%3A extra::2 extra tools not in the lock -> export|csv, fetch_daily_report\n" +
		"::error title=MCP preflight%3A report::1/2 tools missing -> fetch_daily_report%0Aif they were removed on purpose, accept it with 'mcpwatch lock --server report' (drops them from the lock)\n"
	if ann.String() != want {
		t.Errorf("annotations:\n%s\nwant:\n%s", ann.String(), want)
	}

	var md bytes.Buffer
	if err := preflight.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, md.String(), "### ❌ MCP preflight FAILED in ",
		"| Server | Verdict | Locked tools seen | Time | Findings |",
		"| <code>extra</code> | ℹ️ ok | 1 of 1 |", "export&#124;csv",
		"| <code>report</code> | ❌ missing | 1 of 2 |", "1/2 tools missing -&gt; fetch_daily_report |")
}

func TestWriteText(t *testing.T) {
	r := check(t, map[string]map[string]any{
		"report": testServer(probetest.Config{Behavior: probetest.TokenGated}, nil),
		"ok":     testServer(probetest.Config{Tools: withTools("export_csv")}, nil),
	}, `{"report": ["fetch_daily_report", "list_report_dates"], "ok": ["fetch_daily_report"]}`, preflight.Options{})
	var buf bytes.Buffer
	if err := preflight.WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// Beside each missing or extra tool, the command that accepts the change.
	if len(lines) != 5 ||
		!strings.HasPrefix(lines[0], "MCP preflight FAILED in ") || !strings.HasSuffix(lines[0], " ms (1 of 2 servers failed: missing on 1; 1 of 3 locked tools verified)") ||
		lines[1] != "  - report: 2/2 tools missing -> fetch_daily_report, list_report_dates" ||
		lines[2] != "      if they were removed on purpose, accept it with 'mcpwatch lock --server report' (drops them from the lock)" ||
		lines[3] != "  info: ok: 2 extra tools not in the lock -> export_csv, list_report_dates" ||
		lines[4] != "      once reviewed, lock them with 'mcpwatch lock --server ok'" {
		t.Errorf("text:\n%s", buf.String())
	}

	r = check(t, map[string]map[string]any{"ok": testServer(probetest.Config{}, nil)}, `{"ok": ["fetch_daily_report", "list_report_dates"]}`, preflight.Options{})
	buf.Reset()
	_ = preflight.WriteText(&buf, r)
	if got := buf.String(); !strings.HasPrefix(got, "MCP preflight OK in ") || !strings.HasSuffix(got, " ms (2 tools verified across 1 server)\n") {
		t.Errorf("text: %q", got)
	}
}

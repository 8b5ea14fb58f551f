package preflight_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// Tool names a hostile server lists: one of 3 MB, and Markdown that would
// render as a link, an image, emphasis and HTML in a step summary.
var (
	hugeName = strings.Repeat("n", 3<<20)
	mdNames  = []string{
		"[x](https://evil.example/phish)",
		"![img](https://evil.example/pixel.png)",
		"**bold** _it_ ~~struck~~",
		"<img src=x onerror=alert(1)>",
		"`code` \\[esc\\]",
	}
)

// hostileRun is a run against a server listing these tool names, with a
// locked tool gone so that the run fails.
func hostileRun(t *testing.T, names ...string) *preflight.Report {
	t.Helper()
	tools := withTools(names...)
	srv := probetest.NewServer(probetest.Config{Tools: tools})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return check(t, map[string]map[string]any{"hostile": {"url": ts.URL, "transport": "http"}},
		`{"hostile": ["fetch_daily_report", "list_report_dates", "gone"]}`, preflight.Options{})
}

// writers are every human output of a run.
var writers = map[string]func(*bytes.Buffer, *preflight.Report) error{
	"text":        func(b *bytes.Buffer, r *preflight.Report) error { return preflight.WriteText(b, r) },
	"annotations": func(b *bytes.Buffer, r *preflight.Report) error { return preflight.WriteAnnotations(b, r) },
	"markdown":    func(b *bytes.Buffer, r *preflight.Report) error { return preflight.WriteMarkdown(b, r) },
	"junit":       func(b *bytes.Buffer, r *preflight.Report) error { return preflight.WriteJUnit(b, r) },
}

// A 3 MB tool name is cut in every human output: it wrote a 3 MB line to
// the text and the annotations, and a 6 MB step summary.
func TestHugeToolNameIsCut(t *testing.T) {
	r := hostileRun(t, append([]string{hugeName}, mdNames...)...)
	if !r.Servers[0].Failed {
		t.Fatalf("the run did not fail: %+v", r.Servers[0])
	}
	for name, write := range writers {
		var b bytes.Buffer
		if err := write(&b, r); err != nil {
			t.Fatal(err)
		}
		if b.Len() > 64<<10 {
			t.Errorf("%s: %d bytes for one server", name, b.Len())
		}
		if !strings.Contains(b.String(), strings.Repeat("n", 100)+"…") {
			t.Errorf("%s: the name is not shown cut", name)
		}
	}
	// The JSON report keeps the name whole: the list cap bounds it.
	if !containsTool(r.Servers[0].Probe.ToolNames(), hugeName) {
		t.Error("the JSON report lost the full name")
	}
}

func containsTool(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// Markdown in tool names is shown as text in the step summary: no link, no
// image, no emphasis, no HTML.
func TestMarkdownInToolNamesEscaped(t *testing.T) {
	// Bare URLs, www. names and addresses GitHub would link by itself.
	r := hostileRun(t, append([]string{"https://evil.example/login", "www.evil.example", "admin@evil.example"}, mdNames...)...)
	var b bytes.Buffer
	if err := preflight.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, raw := range []string{"[x]", "](", "![", "**bold**", "~~struck~~", "<img", "`code`", "\\[", "://", "www.", "@evil"} {
		if strings.Contains(md, raw) {
			t.Errorf("the summary holds %q as Markdown:\n%s", raw, md)
		}
	}
	if !strings.Contains(md, "&#91;x&#93;(https&#58;//evil.example/phish)") {
		t.Errorf("the link's text is not shown escaped:\n%s", md)
	}
}

// The step summary stays under GitHub's 1 MiB limit however many servers
// and findings a run has, and says where it was cut.
func TestStepSummaryUnderLimit(t *testing.T) {
	r := &preflight.Report{Kind: preflight.ReportKind}
	for i := range 20000 {
		name := fmt.Sprintf("server-%05d-%s", i, strings.Repeat("x", 60))
		r.Servers = append(r.Servers, preflight.ServerReport{Name: name, Verdict: verdict.KindMissing, Failed: true,
			Problems: []preflight.Problem{{Kind: verdict.KindMissing, Fails: true, Message: "1/1 tools missing -> " + strings.Repeat("t", 120),
				Details: []string{"1/1 locked tools unverified -> " + strings.Repeat("t", 120)}}}})
	}
	r.Totals.Servers, r.Totals.Failed = len(r.Servers), len(r.Servers)
	var b bytes.Buffer
	if err := preflight.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if b.Len() >= 1<<20 {
		t.Fatalf("summary of %d bytes, GitHub's limit is %d", b.Len(), 1<<20)
	}
	if !strings.Contains(b.String(), "The summary is cut here") || !strings.HasPrefix(b.String(), "### ❌ MCP preflight FAILED") {
		t.Errorf("the cut is not said:\n%s", b.String()[max(0, b.Len()-800):])
	}
}

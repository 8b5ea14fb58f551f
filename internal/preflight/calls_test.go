package preflight

import (
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

func TestMarkdownCallTable(t *testing.T) {
	r := &Report{OK: false, Totals: Totals{Servers: 1, Failed: 1, Calls: 2, CallsFailed: 1}, Servers: []ServerReport{{
		Name: "report", Verdict: verdict.KindCallFailed, Failed: true,
		Problems: []Problem{{Kind: verdict.KindCallFailed, Fails: true, Message: "call a failed (is_error): status: expected success, got isError: <b>|x"}},
		Calls: []CallReport{
			{Tool: "a", Passed: false, Reason: "is_error", Message: "status: expected success, got isError: <b>|x", Attempts: []CallAttempt{{}}},
			{Tool: "b", Passed: true, Attempts: []CallAttempt{{Response: "result: ok"}}},
		},
	}}}
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"#### Tool calls",
		"| <code>report</code> | <code>a</code> | ❌ is_error | 1 | 0 ms | status: expected success, got isError: &lt;b&gt;&#124;x |",
		"| <code>report</code> | <code>b</code> | ✅ pass | 1 | 0 ms | result: ok |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

//go:build unix

package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
)

// chainRepo is a repository whose one CI step runs mcpwatch check n+1
// times in one && list, the last command the only one with a receipt,
// which a later step uploads: each command lacks what one other has.
func chainRepo(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		tb.Fatal(err)
	}
	run := strings.Repeat("mcpwatch check && ", n) + "mcpwatch check --receipt r.json"
	doc := "on: {pull_request: {}, schedule: [{cron: '0 5 * * *'}]}\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: " + run + "\n" +
		"      - uses: actions/upload-artifact@v4\n        if: always()\n        with: {name: receipt, path: r.json}\n"
	if err := os.WriteFile(filepath.Join(wf, "gate.yml"), []byte(doc), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcpwatch.yml"), []byte("servers:\n  s:\n    command: echo\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// chainOpts reads each command as strict with GitHub output, and with the
// receipt it names.
func chainOpts(dir string) Options {
	o := examineOpts(dir)
	o.ParseCheck = func(args []string) (CheckFlags, error) {
		f := CheckFlags{Strict: true, Format: preflight.FormatGitHub}
		if i := slices.Index(args, "--receipt"); i >= 0 && i+1 < len(args) {
			f.Receipt = args[i+1]
		}
		return f, nil
	}
	return o
}

// A step of a few hundred mcpwatch check commands is judged whole: the
// one with the receipt is the gate, and the others' flags are named.
func TestExamineChainJudged(t *testing.T) {
	rep := Examine(chainOpts(chainRepo(t, 300)))
	if rep.Gate == nil || !strings.Contains(rep.Gate.Command, "--receipt") {
		t.Fatalf("judged %+v, want the command with the receipt", rep.Gate)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Problem, "commands of the CI run mcpwatch check") {
			t.Errorf("301 commands: %s", f.Problem)
		}
	}
}

// doctor reads a step of many mcpwatch check commands in time linear in
// their number, and judges at most maxCandidates of them, saying so in a
// finding: 32 times the commands cost about 32 times as much (reading the
// shell; judging stops at the bound), where judging each with a pass over
// the others (which of them has the flag it lacks, where its and-or list
// ends) cost hundreds of times. Measured as a ratio, never against a wall
// clock; the bound is twice linear.
func TestExamineChainBounded(t *testing.T) {
	cost := func(n int) (time.Duration, *Report) {
		dir := chainRepo(t, n)
		best, rep := time.Duration(1<<62), (*Report)(nil)
		for range 2 {
			start := time.Now()
			rep = Examine(chainOpts(dir))
			best = min(best, time.Since(start))
		}
		return best, rep
	}
	small, _ := cost(500)
	large, rep := cost(16_000)
	t.Logf("501 commands: %v; 16,001: %v (%.1f times)", small, large, float64(large)/float64(small))
	if ratio := float64(large) / float64(small); ratio > 64 {
		t.Errorf("16,001 commands cost %v, %.0f times 501 (%v): worse than linear", large, ratio, small)
	}
	i := slices.IndexFunc(rep.Findings, func(f Finding) bool { return strings.Contains(f.Problem, "commands of the CI run mcpwatch check") })
	if i < 0 || !strings.Contains(rep.Findings[i].Problem, "16001 commands of the CI run mcpwatch check; doctor judged the first 1000") ||
		rep.Findings[i].File != ".github/workflows/gate.yml" || rep.Findings[i].Line != 6 {
		t.Errorf("no finding that says how many commands were left unjudged, where: %+v", rep.Findings)
	}
}

// BenchmarkExamineChain is doctor on a step of 25,000 and 50,000
// mcpwatch check commands joined by &&.
func BenchmarkExamineChain(b *testing.B) {
	for _, n := range []int{25_000, 50_000} {
		dir := chainRepo(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Examine(chainOpts(dir))
			}
		})
	}
}

package doctor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
)

// The fixture's gate holds, on GitHub Actions and on GitLab CI: doctor
// names the gate it judged and says, one line each, what it verified.
func TestGateHolds(t *testing.T) {
	t.Parallel()
	rep := newRepo(t, systemGitHub).examine(t)
	verified := holds(t, rep)
	g := rep.Gate
	if g == nil || g.File != githubGate || g.Line != 15 || g.Job != "mcp-preflight" || g.Step != "MCP preflight" ||
		g.Command != "mcpwatch check --strict --format github --receipt mcp-receipt.json" ||
		g.Config != "mcpwatch.yml" || g.Lock != "mcp-tools.lock.json" {
		t.Errorf("the gate judged: %+v", g)
	}
	containsAll(t, "what doctor verified", verified,
		`gate: .github/workflows/gate.yml:15, the step "MCP preflight" of job mcp-preflight runs: mcpwatch check --strict --format github --receipt mcp-receipt.json`,
		"flags: strict, GitHub output and a receipt (mcp-receipt.json), on that one command",
		"configuration: mcpwatch.yml (2 servers), lock mcp-tools.lock.json",
		`receipt: mcp-receipt.json, uploaded by the step "Keep the receipt" (line 16) whether the check passes or fails`,
		"triggers: pull_request, schedule; schedule 17 5 * * *",
		"credentials: REPORT_API_TOKEN from ${{ secrets.REPORT_API_TOKEN }} (the step's env)",
		"start-up: memory (npx, 2m0s)",
		"timeout: job mcp-preflight has 15m0s",
		"lock: mcp-tools.lock.json, tracked by git, covers all 2 servers checked",
		"contracts: report.tools.json, tracked by git",
		"canaries: report by fetch_daily_report")
	if out := text(t, rep); !strings.HasPrefix(out, "mcpwatch doctor: the CI gate holds\n  gate: ") {
		t.Errorf("the text report of a gate that holds:\n%s", out)
	}

	rep = newRepo(t, systemGitLab).examine(t)
	verified = holds(t, rep)
	if g := rep.Gate; g == nil || g.File != ".gitlab-ci.yml" || g.Line != 10 || g.Job != "mcp-preflight" || g.Step != "script" {
		t.Errorf("the GitLab gate judged: %+v", g)
	}
	containsAll(t, "what doctor verified on GitLab", verified,
		"the script of job mcp-preflight runs: mcpwatch check --strict --format junit --output mcp-preflight.xml --receipt mcp-receipt.json",
		"flags: strict, JUnit output and a receipt (mcp-receipt.json)",
		"receipt: mcp-receipt.json, kept as an artifact of job mcp-preflight whether the check passes or fails",
		"triggers: job mcp-preflight runs in merge request or branch pipelines and in scheduled ones",
		"credentials: REPORT_API_TOKEN from $REPORT_API_TOKEN (the variables of job mcp-preflight)")
}

// Each way a GitHub gate falls short is a finding at the line to change,
// with a fix that says what to write; the gate no longer holds.
func TestGateFindings(t *testing.T) {
	t.Parallel()
	const run = "run: mcpwatch check --strict --format github --receipt mcp-receipt.json"
	judgeChanges(t, systemGitHub, func(_ *testing.T, _ change, r *gateRepo) { r.files["other.yml"] = r.files["mcpwatch.yml"] }, []change{
		{"no --strict", "", run, "run: mcpwatch check --format github --receipt mcp-receipt.json",
			&want{"gate", githubGate, 15, `the mcpwatch check of the step "MCP preflight" of job mcp-preflight has no --strict`,
				"add --strict to that same command: mcpwatch check --format github --receipt mcp-receipt.json --strict"}, ""},
		{"--format json", "", run, "run: mcpwatch check --fail-on-warn --format json --receipt mcp-receipt.json",
			&want{"gate", githubGate, 15, "has no --format github: no annotation on the pull request",
				"add --format github to that same command"}, ""},
		{"no receipt", "", run, "run: mcpwatch check --strict --format github",
			&want{"gate", githubGate, 15, "has no --receipt FILE", "--receipt mcp-receipt.json; then upload the file in a later step of the job"}, ""},
		{"--server checks one", "", run, run + " --server report",
			&want{"gate", githubGate, 15, "checks only report (--server): the other servers are not gated", "remove --server"}, ""},
		{"--skip leaves one out", "", run, run + " --skip memory",
			&want{"gate", githubGate, 15, "leaves out memory (--skip): nothing gates them", "remove --skip"}, ""},
		{"a usage error", "", run, run + " --stirct",
			&want{"gate", githubGate, 15, "which mcpwatch check refuses (unknown flag: --stirct): the step fails on a usage error (exit 2)",
				"'mcpwatch check --help' lists its flags"}, ""},
		{"|| true", "", run, run + " || true",
			&want{"gate", githubGate, 15, "does not fail when mcpwatch check fails: || after it runs another command", "no || true"}, ""},
		{"negated", "", run, "run: '! " + run[len("run: "):] + "'",
			&want{"gate", githubGate, 15, "it is negated with !", "not negated"}, ""},
		{"in the background", "", run, "run: |\n          " + run[len("run: "):] + " &\n          wait",
			&want{"gate", githubGate, 16, "it runs in the background (&)", "as a command of its own"}, ""},
		{"piped under sh", "", run, "shell: sh\n        " + run + " | tee log",
			&want{"gate", githubGate, 16, "without pipefail a pipeline's status is its last command's", ""}, ""},
		{"set +e", "", run, "run: |\n          set +e\n          " + run[len("run: "):] + "\n          echo done",
			&want{"gate", githubGate, 17, "the shell runs on after a failing command (no -e, or set +e)", ""}, ""},
		{"continue-on-error on the step", "", "      - name: MCP preflight\n", "      - name: MCP preflight\n        continue-on-error: true\n",
			&want{"gate", githubGate, 13, `continue-on-error: true on the step "MCP preflight": a failing check does not fail the run`,
				`remove continue-on-error from the step "MCP preflight"`}, ""},
		{"continue-on-error on the job", "", "    timeout-minutes: 15\n", "    timeout-minutes: 15\n    continue-on-error: ${{ matrix.experimental }}\n",
			&want{"gate", githubGate, 10, "continue-on-error: ${{ matrix.experimental }} on job mcp-preflight", "remove continue-on-error from job mcp-preflight"}, ""},
		{"an if: on the event", "", "      - name: MCP preflight\n", "      - name: MCP preflight\n        if: github.event_name == 'pull_request'\n",
			&want{"gate", githubGate, 13, `runs only if github.event_name == 'pull_request': whether it runs depends on the event`, "remove that if:"}, ""},
		{"a config file only the run knows", "", run, "run: mcpwatch check -c ${{ matrix.config }} --strict --format github --receipt mcp-receipt.json",
			&want{"gate", githubGate, 15, "reads --config.file ${{ matrix.config }}, which only the run knows", "name the configuration file as it is in the repository"}, ""},
		{"a cd doctor cannot follow", "", run, "run: |\n          cd $(mktemp -d)\n          " + run[len("run: "):],
			&want{"gate", githubGate, 17, "changes to a directory doctor cannot follow before it runs mcpwatch check", "run it from the repository's top"}, ""},
		{"another configuration", "", run, "run: mcpwatch check -c other.yml --strict --format github --receipt mcp-receipt.json",
			&want{"gate", githubGate, 15, "checks other.yml, not mcpwatch.yml, the configuration mcpwatch check reads at the repository's top",
				"pass --config.file mcpwatch.yml on that command (or, if other.yml is the one meant, run mcpwatch doctor --config.file other.yml)"}, ""},
	})
}

// A flag counts only on the command that checks: one on another command
// of the step is named, and the first command with the fewest findings is
// the gate judged.
func TestGateFlagsOnAnotherCommand(t *testing.T) {
	t.Parallel()
	rep := newRepo(t, systemGitHub).editCI(t,
		"run: mcpwatch check --strict --format github --receipt mcp-receipt.json",
		"run: |\n          mcpwatch check --strict --format github\n          mcpwatch check --receipt mcp-receipt.json --format github").examine(t)
	if rep.Gate == nil || rep.Gate.Line != 16 {
		t.Fatalf("judged %+v, want the first command (line 16), which lacks one flag, as the second does", rep.Gate)
	}
	f := findingOf(t, rep, want{"gate", githubGate, 16, "has no --receipt FILE", "mcpwatch check --strict --format github --receipt mcp-receipt.json"})
	containsAll(t, "the finding", f.Problem, "(the command at .github/workflows/gate.yml:17 has it, but a flag counts only on the command that checks)")
	if len(rep.Findings) != 1 {
		t.Errorf("the findings of one command, want one:\n%s", text(t, rep))
	}
}

// Without a CI step that runs mcpwatch check, the one finding says which
// files were read and how to add a gate; the repository's own checks
// (here: the lock) still run.
func TestNoGate(t *testing.T) {
	t.Parallel()
	r := newRepo(t, systemGitHub).editCI(t, "run: mcpwatch check", "run: mcpwatch lock")
	rep := r.examine(t)
	if rep.Gate != nil {
		t.Errorf("a gate judged: %+v", rep.Gate)
	}
	findingOf(t, rep, want{"gate", githubGate, 1, "no CI step runs mcpwatch check (read: .github/workflows/gate.yml): nothing stops a change",
		"copy examples/github-actions/mcp-preflight.yml"})
	if len(rep.Findings) != 1 {
		t.Errorf("want the one finding:\n%s", text(t, rep))
	}

	delete(r.files, githubGate)
	r.untracked = []string{"mcp-tools.lock.json"}
	rep = r.examine(t)
	findingOf(t, rep, want{"gate", ".github/workflows/mcp-preflight.yml", 1, "(read: no CI file (.github/workflows/*.yml, .gitlab-ci.yml))", ""})
	findingOf(t, rep, want{"lock", "mcp-tools.lock.json", 1, "the lock mcp-tools.lock.json is not tracked by git", "git add mcp-tools.lock.json"})
}

// The text report: the verdict with the count, the gate judged, then each
// finding as FILE:LINE: problem and its fix; the JSON one the same fields,
// schema_version first.
func TestReportOutputs(t *testing.T) {
	t.Parallel()
	rep := &Report{Gate: &Gate{File: "ci.yml", Line: 3, Job: "j", Step: "s", Command: "mcpwatch check"},
		Findings: []Finding{{Check: "gate", File: "ci.yml", Line: 3, Problem: "p1", Fix: "f1"}, {Check: "lock", File: "l.json", Line: 1, Problem: "p2", Fix: "f2"}},
		Verified: []string{}}
	wantText := "mcpwatch doctor: the CI gate does not hold (2 findings)\n" +
		"  the gate judged (the closest to one): ci.yml:3, job j, step \"s\": mcpwatch check\n" +
		"\nci.yml:3: p1\n  fix: f1\n" +
		"\nl.json:1: p2\n  fix: f2\n"
	if got := text(t, rep); got != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", got, wantText)
	}
	rep.Findings, rep.Gate = rep.Findings[:1], nil
	if got := text(t, rep); !strings.HasPrefix(got, "mcpwatch doctor: the CI gate does not hold (1 finding)\n\nci.yml:3") {
		t.Errorf("one finding, no gate:\n%s", got)
	}

	var b bytes.Buffer
	if err := WriteJSON(&b, newRepo(t, systemGitHub).editCI(t, " --strict", "").examine(t)); err != nil {
		t.Fatal(err)
	}
	if err := jsondoc.Check(b.Bytes()); err != nil {
		t.Error(err)
	}
	var doc struct {
		OK       bool      `json:"ok"`
		Gate     *Gate     `json:"gate"`
		Findings []Finding `json:"findings"`
		Verified []string  `json:"verified"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OK || doc.Gate == nil || doc.Gate.Line != 15 || len(doc.Findings) != 1 || doc.Findings[0].Check != "gate" ||
		doc.Findings[0].Line != 15 || doc.Verified == nil {
		t.Errorf("json: %s", b.String())
	}
}

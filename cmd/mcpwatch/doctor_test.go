package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
)

// doctorRepo is a repository doctor runs in: its files, and those git does
// not track.
type doctorRepo struct {
	files     map[string]string
	untracked []string
}

const exampleWorkflow = ".github/workflows/mcp-preflight.yml"

// exampleRepo is the project's own example: the GitHub Actions workflow of
// examples/github-actions in .github/workflows/ of a repository holding an
// agent's .mcp.json (an npx server), an mcpwatch.yml that imports it and
// adds an HTTP server whose token is a secret, with the contracts of
// examples/report.tools.json as its canary, and the lock.
func exampleRepo(t *testing.T) *doctorRepo {
	t.Helper()
	r := &doctorRepo{files: map[string]string{
		exampleWorkflow:     string(readFile(t, "../../examples/github-actions/mcp-preflight.yml")),
		"report.tools.json": string(readFile(t, "../../examples/report.tools.json")),
	}}
	for _, name := range []string{".mcp.json", "mcpwatch.yml", "mcp-tools.lock.json"} {
		r.files[name] = string(readFile(t, filepath.Join("testdata/doctor", name)))
	}
	return r
}

// edit replaces old, which must occur once, in the file name.
func (r *doctorRepo) edit(t *testing.T, name, old, new string) {
	t.Helper()
	if n := strings.Count(r.files[name], old); n != 1 {
		t.Fatalf("%s holds %q %d times; the example changed: update the test", name, old, n)
	}
	r.files[name] = strings.Replace(r.files[name], old, new, 1)
}

// run writes the repository to a new directory, adds its files to git's
// index (but the untracked ones) and runs mcpwatch doctor there.
func (r *doctorRepo) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for name, content := range r.files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(r.untracked, name) {
			git("add", "--", name)
		}
	}
	return runBin(t, dir, nil, append([]string{"doctor"}, args...)...)
}

func TestDoctorOnTheExample(t *testing.T) {
	t.Parallel()
	r := exampleRepo(t).run(t)
	if r.code != exitOK {
		t.Fatalf("doctor on the example workflow: want exit 0, got %s", r)
	}
	assertContains(t, "doctor", r.stdout,
		"the CI gate holds",
		"gate: .github/workflows/mcp-preflight.yml:", `the step "MCP preflight" of job mcp-preflight runs: mcpwatch check --strict --format github --receipt mcp-receipt.json`,
		"configuration: mcpwatch.yml (2 servers), lock mcp-tools.lock.json",
		`receipt: mcp-receipt.json, uploaded by the step "Keep the receipt"`,
		"schedule 17 5 * * *",
		"credentials: REPORT_API_TOKEN from ${{ secrets.REPORT_API_TOKEN }} (the step's env)",
		"lock: mcp-tools.lock.json, tracked by git, covers all 2 servers checked",
		"canaries: report by fetch_daily_report, list_report_dates")
	t.Logf("mcpwatch doctor on the example:\n%s", r.stdout)

	r = exampleRepo(t).run(t, "--format", "json")
	var doc struct {
		OK       bool
		Gate     struct{ File, Config, Lock string }
		Findings []json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != exitOK {
		t.Fatalf("--format json: %v\n%s", err, r)
	}
	if err := jsondoc.Check([]byte(r.stdout)); err != nil {
		t.Errorf("--format json: %v", err)
	}
	if !doc.OK || doc.Gate.File != exampleWorkflow || doc.Gate.Config != "mcpwatch.yml" || len(doc.Findings) != 0 {
		t.Errorf("--format json: %+v", doc)
	}
}

// A workflow that passes when written other ways: the shell doctor reads.
func TestDoctorReadsTheShell(t *testing.T) {
	t.Parallel()
	const step = "        run: mcpwatch check --strict --format github --receipt mcp-receipt.json\n"
	for _, tc := range []struct{ name, run string }{
		{"a run: | block with continuations and an && chain", `        run: |
          set -euo pipefail
          mcpwatch version && \
            mcpwatch check \
              --fail-on-warn \
              --format=github \
              --receipt "mcp-receipt.json"
`},
		{"go run of the module's command", "        run: go run github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.1.0 check --strict --format github --receipt mcp-receipt.json\n"},
		{"a path, and a receipt named through ${{ env }} and $VAR", `        run: |
          RECEIPT_DIR=.
          "$HOME/go/bin/mcpwatch" check --strict --format github --receipt "$RECEIPT_DIR/${{ env.RECEIPT }}"
`},
		{"piped into tee, with bash's pipefail", "        run: mcpwatch check --strict --format github --receipt mcp-receipt.json | tee preflight.log\n"},
		{"|| exit 78 keeps the failure", "        run: mcpwatch check --strict --format github --receipt mcp-receipt.json || exit 78\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := exampleRepo(t)
			repo.edit(t, exampleWorkflow, step, tc.run)
			repo.edit(t, exampleWorkflow, "permissions:", "env:\n  RECEIPT: mcp-receipt.json\n\npermissions:")
			if r := repo.run(t); r.code != exitOK {
				t.Errorf("want exit 0, got %s\nworkflow:\n%s", r, repo.files[exampleWorkflow])
			}
		})
	}
}

// brokenWorkflow is a change to the example and the finding it must give.
type brokenWorkflow struct {
	name   string
	break_ func(t *testing.T, r *doctorRepo)
	// at is where the finding is: the file, and text on its line in the
	// broken file ("" for line 1).
	at [2]string
	// want are parts of the finding's problem and fix, in order, after
	// its FILE:LINE:.
	want []string
}

const (
	checkStep    = "        run: mcpwatch check --strict --format github --receipt mcp-receipt.json\n"
	uploadStep   = "      - name: Keep the receipt\n        if: always()\n        uses: actions/upload-artifact@v4\n        with:\n          name: mcp-receipt\n          path: mcp-receipt.json\n          if-no-files-found: ignore\n"
	stepEnv      = "        env:\n          # Every secret a configured server reads through ${VAR}.\n          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n"
	scheduleLine = "  schedule:\n    - cron: \"17 5 * * *\"\n"
)

func brokenWorkflows() []brokenWorkflow {
	wf := exampleWorkflow
	return []brokenWorkflow{{
		name: "flags on two steps",
		at:   [2]string{wf, "run: mcpwatch check --strict --format github\n"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, checkStep, "        run: mcpwatch check --strict --format github\n\n      - name: Keep a receipt\n        run: mcpwatch check --receipt mcp-receipt.json\n")
		},
		want: []string{`has no --receipt FILE`, "(the command at .github/workflows/mcp-preflight.yml:", " has it, but a flag counts only on the command that checks)",
			"fix: add --receipt mcp-receipt.json to that same command: mcpwatch check --strict --format github --receipt mcp-receipt.json"},
	}, {
		name:   "no upload",
		at:     [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, uploadStep, "") },
		want: []string{`no step after the step "MCP preflight" of job mcp-preflight uploads its receipt mcp-receipt.json`,
			"fix: add a step after it to job mcp-preflight: uses: actions/upload-artifact@v4, if: always()"},
	}, {
		name:   "an upload that skips a failed check",
		at:     [2]string{wf, "- name: Keep the receipt"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, "        if: always()\n", "") },
		want:   []string{`the step "Keep the receipt" uploads the receipt mcp-receipt.json only when every step before it passed`, "fix: give the step"},
	}, {
		name: "an upload of another file",
		at:   [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "          path: mcp-receipt.json\n", "          path: reports/\n")
		},
		want: []string{`uploads its receipt mcp-receipt.json: it is lost with the runner (the step "Keep the receipt" uploads reports/, which does not take it)`},
	}, {
		name:   "secret missing",
		at:     [2]string{wf, "- name: MCP preflight"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, stepEnv, "") },
		want: []string{`${REPORT_API_TOKEN}, which server "report" (header:Authorization) reads, is not set in the env: of the step "MCP preflight" of job mcp-preflight, nor by an earlier step`,
			`fix: add REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }} to the env: of the step`},
	}, {
		name: "secret set to an empty value",
		at:   [2]string{wf, `REPORT_API_TOKEN: ""`},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}", `REPORT_API_TOKEN: ""`)
		},
		want: []string{`${REPORT_API_TOKEN}, which server "report" (header:Authorization) reads, is set to an empty value in the step's env`},
	}, {
		name: "secret missing for a ${VAR:?message}",
		at:   [2]string{wf, "- name: MCP preflight"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, stepEnv, "")
			r.edit(t, "mcpwatch.yml", "${REPORT_API_TOKEN}", "${REPORT_API_TOKEN:?the report token}")
		},
		want: []string{`${REPORT_API_TOKEN}, which server "report" (header:Authorization) reads, is not set in the env: of the step "MCP preflight" of job mcp-preflight, nor by an earlier step: the check runs without it, so it fails on every run (credential_missing)`},
	}, {
		name: "a credential in plain text",
		at:   [2]string{wf, "REPORT_API_TOKEN: tok-123"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}", `REPORT_API_TOKEN: tok-123`)
		},
		want: []string{"REPORT_API_TOKEN is written in plain text in the step's env", "fix: write REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }} instead"},
	}, {
		name:   "unscheduled",
		at:     [2]string{wf, "on:"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, scheduleLine, "") },
		want: []string{"the workflow runs on pull_request, push, workflow_dispatch, with no schedule: a credential that expires between pushes",
			`fix: add a schedule under on: (schedule: - cron: "17 5 * * *", every morning), or say why there is none with a comment "# mcpwatch-doctor: no-schedule because ..." on the on: key`},
	}, {
		name: "unscheduled, with a waiver that gives no reason",
		at:   [2]string{wf, "on:"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, scheduleLine, "")
			r.edit(t, wf, "\non:\n", "\non: # mcpwatch-doctor: no-schedule\n")
		},
		want: []string{"the comment mcpwatch-doctor: no-schedule gives no reason", "fix: say why after it"},
	}, {
		name:   "not on pull requests",
		at:     [2]string{wf, "on:"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, "  pull_request:\n", "  pull_request_target:\n") },
		want:   []string{"the workflow runs on pull_request_target, push, schedule, workflow_dispatch, not on pull requests", "(pull_request_target runs the base branch's workflow"},
	}, {
		name: "a paths filter that leaves out the lock",
		at:   [2]string{wf, "paths:"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "  pull_request:\n", "  pull_request:\n    paths: ['.mcp.json', 'src/**']\n")
		},
		want: []string{"the pull_request paths: filter leaves out mcpwatch.yml, report.tools.json and mcp-tools.lock.json: a pull request that changes only those does not run the check"},
	}, {
		name: "its failure hidden by || true",
		at:   [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, checkStep, strings.TrimSuffix(checkStep, "\n")+" || true\n")
		},
		want: []string{"the step \"MCP preflight\" of job mcp-preflight does not fail when mcpwatch check fails: || after it runs another command when it fails"},
	}, {
		name: "piped into tee by sh, without pipefail",
		at:   [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, checkStep, "        shell: sh\n"+strings.TrimSuffix(checkStep, "\n")+" | tee preflight.log\n")
		},
		want: []string{"does not fail when mcpwatch check fails: its output is piped into another command, and without pipefail"},
	}, {
		name: "continue-on-error",
		at:   [2]string{wf, "continue-on-error: true"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "      - name: MCP preflight\n", "      - name: MCP preflight\n        continue-on-error: true\n")
		},
		want: []string{"continue-on-error: true on the step \"MCP preflight\": a failing check does not fail the run", "fix: remove continue-on-error from the step \"MCP preflight\""},
	}, {
		name:   "no GitHub output",
		at:     [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, " --format github", "") },
		want:   []string{"has no --format github: no annotation on the pull request", "fix: add --format github to that same command"},
	}, {
		name: "another configuration",
		at:   [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.files["ci/.mcp.json"] = r.files[".mcp.json"]
			r.edit(t, wf, "mcpwatch check --strict", "mcpwatch check -c ci/.mcp.json --strict")
		},
		want: []string{"checks ci/.mcp.json, not mcpwatch.yml, the configuration mcpwatch check reads at the repository's top", "fix: pass --config.file mcpwatch.yml on that command"},
	}, {
		name:   "a flag check refuses",
		at:     [2]string{wf, "run: mcpwatch check"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, "check --strict", "check --stirct") },
		want:   []string{"the step \"MCP preflight\" of job mcp-preflight runs \"mcpwatch check --stirct", "which mcpwatch check refuses (unknown flag: --stirct)"},
	}, {
		name: "only on the schedule",
		at:   [2]string{wf, "if: github.event_name"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, wf, "      - name: MCP preflight\n", "      - name: MCP preflight\n        if: github.event_name == 'schedule'\n")
		},
		want: []string{"the step \"MCP preflight\" of job mcp-preflight runs only if github.event_name == 'schedule'"},
	}, {
		name:   "a job timeout too short",
		at:     [2]string{wf, "timeout-minutes: 2"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, "timeout-minutes: 10", "timeout-minutes: 2") },
		want:   []string{"job mcp-preflight's timeout-minutes (2) leaves no room for the check", "fix: raise the timeout-minutes of job mcp-preflight to at least"},
	}, {
		name:   "a job timeout without room for npx's start-up",
		at:     [2]string{wf, "timeout-minutes: 6"},
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, wf, "timeout-minutes: 10", "timeout-minutes: 6") },
		want: []string{"job mcp-preflight's timeout-minutes (6) leaves no room for the check: it may take up to 2m0s (2 servers, each up to its deadline, a package runner's cold start included)",
			"fix: raise the timeout-minutes of job mcp-preflight to at least 7"},
	}, {
		name: "a start-up allowance too short for a cold runner",
		at:   [2]string{"mcpwatch.yml", "start_timeout: 20s"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, "mcpwatch.yml", "imports:\n", "defaults:\n  start_timeout: 20s\nimports:\n")
		},
		want: []string{`server "memory" starts through npx, which installs what it runs first, with a start-up allowance of 20s: on a CI runner with nothing cached the install alone takes 30-60 s`,
			`fix: raise start_timeout for server "memory" (under the server, or defaults.start_timeout in an mcpwatch.yml) to at least 1m0s, or remove it for the default 2m0s`},
	}, {
		name:   "the lock not tracked",
		at:     [2]string{"mcp-tools.lock.json", ""},
		break_: func(t *testing.T, r *doctorRepo) { r.untracked = append(r.untracked, "mcp-tools.lock.json") },
		want:   []string{"the lock mcp-tools.lock.json is not tracked by git", "fix: git add mcp-tools.lock.json"},
	}, {
		name: "a server the lock does not cover",
		at:   [2]string{"mcp-tools.lock.json", ""},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, "mcp-tools.lock.json", "  \"memory\": [\n    \"create_entities\",\n    \"read_graph\"\n  ],\n", "")
		},
		want: []string{"the lock has no entry for memory", "fix: run mcpwatch lock --server memory"},
	}, {
		name: "no workflow",
		at:   [2]string{wf, ""},
		break_: func(t *testing.T, r *doctorRepo) {
			delete(r.files, wf)
		},
		want: []string{"no CI step runs mcpwatch check (read: no CI file", "fix: add a workflow that runs it"},
	}, {
		name: "no canary sees a credential",
		at:   [2]string{"mcpwatch.yml", "  report:"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, "mcpwatch.yml", "    contracts: report.tools.json\n", "")
		},
		want: []string{`server "report" is given header:Authorization; no canary can see this server's credential: none of its 2 locked tools has a contract that is called`,
			"only a call notices", `fix: give server "report" a canary: run mcpwatch init, which writes mcp-contracts/report.tools.json with contracts for its tools that read`},
	}, {
		name: "a canary still waiting for its input",
		at:   [2]string{"report.tools.json", ""},
		break_: func(t *testing.T, r *doctorRepo) {
			r.files["report.tools.json"] = `{"tools": {"fetch_daily_report": {"input": {"date": "<fill in a date that has a report>"}}}}`
		},
		// what init writes for a tool that needs input: the gate's check
		// fails on it under --strict, so doctor does, with check's words
		want: []string{`mcpwatch check --strict fails on the files alone (exit 78), whatever the servers answer: report: 1 contract not called until the "<fill in ...>" values of report.tools.json are filled in -> fetch_daily_report (input.date) (call_coverage)`,
			`server "report" is given header:Authorization; no canary can see this server's credential yet: fetch_daily_report waits for its input`,
			`fix: enable a contract in report.tools.json for a tool of server "report" that only reads`},
	}, {
		// a server given no credential (no canary finding), with the
		// starter contract init writes for a tool that needs input: the
		// gate's check --strict fails on it, and so must doctor
		name: "a contract of a server without credentials waiting for its input",
		at:   [2]string{"mcp-contracts/memory.tools.json", ""},
		break_: func(t *testing.T, r *doctorRepo) {
			r.files["mcp-contracts/memory.tools.json"] = `{"tools": {"read_graph": {"input": {"query": "<fill in a query that finds something>"}}}}`
		},
		want: []string{`mcpwatch check --strict fails on the files alone (exit 78), whatever the servers answer: memory: 1 contract not called until the "<fill in ...>" values of mcp-contracts/memory.tools.json are filled in -> read_graph (input.query) (call_coverage)`,
			`fix: in mcp-contracts/memory.tools.json, fill in the "<fill in ...>" values`},
	}, {
		name: "a locked server the configuration no longer defines",
		at:   [2]string{"mcp-tools.lock.json", ""},
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, "mcp-tools.lock.json", "  \"report\": [", "  \"gone\": [\"a_tool\"],\n  \"report\": [")
		},
		want: []string{`mcpwatch check --strict fails on the files alone (exit 78), whatever the servers answer: gone: in the lock but not in mcpwatch.yml; add the server back, or relock without it ('mcpwatch lock') (not_configured)`,
			`fix: add server "gone" back to mcpwatch.yml, or relock without it: mcpwatch lock, then commit the lock`},
	}, {
		name:   "a contracts file missing",
		at:     [2]string{"mcpwatch.yml", "contracts: report.tools.json"},
		break_: func(t *testing.T, r *doctorRepo) { delete(r.files, "report.tools.json") },
		want:   []string{"the configuration the gate checks cannot be loaded", "report.tools.json", "fix: fix it: mcpwatch config check names each problem"},
	}, {
		name: "a contracts file that does not parse",
		at:   [2]string{"mcpwatch.yml", "contracts: report.tools.json"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.files["report.tools.json"] = `{"tools": {"fetch_daily_report": {"expect": {"status": "sometimes"}}}}`
		},
		want: []string{"the configuration the gate checks cannot be loaded", "report.tools.json", "sometimes"},
	}, {
		name:   "a contracts file not tracked",
		at:     [2]string{"report.tools.json", ""},
		break_: func(t *testing.T, r *doctorRepo) { r.untracked = append(r.untracked, "report.tools.json") },
		want:   []string{`the contracts file report.tools.json of server "report" is not tracked by git`, "fix: git add report.tools.json"},
	}, {
		name: "an expected tool neither locked nor contracted",
		at:   [2]string{"mcp-probe.config.json", "expectedTools"},
		break_: func(t *testing.T, r *doctorRepo) {
			r.files["mcp-probe.config.json"] = `{"servers": [{"name": "report", "target": "https://reports.example.com/mcp", "transport": "http",
  "headers": {"Authorization": "Bearer ${REPORT_API_TOKEN}"}, "toolsFile": "report.tools.json",
  "expectedTools": ["fetch_daily_report", "export_report"]}]}
`
			r.files["mcpwatch.yml"] = "imports: [.mcp.json, mcp-probe.config.json]\n"
		},
		want: []string{`server "report" expects export_report, which the lock does not hold: check does not fail when it goes`,
			"fix: run mcpwatch lock --server report once the server lists it",
			`mcpwatch check --strict fails on the files alone (exit 78), whatever the servers answer: report: 1 tool expected but without a contract in report.tools.json -> export_report (call_coverage)`,
			`fix: in report.tools.json, fill in the "<fill in ...>" values of each contract named (an input that works), or set "disabled": true on one you do not want called; write a contract for each expected tool named`},
	}}
}

func TestDoctorOnBrokenWorkflows(t *testing.T) {
	t.Parallel()
	for _, b := range brokenWorkflows() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			repo := exampleRepo(t)
			b.break_(t, repo)
			r := repo.run(t)
			if r.code != exitConfig {
				t.Fatalf("want exit 78, got %s", r)
			}
			file, line := b.at[0], 1
			if b.at[1] != "" {
				content := repo.files[file]
				i := strings.Index(content, b.at[1])
				if i < 0 {
					t.Fatalf("%s does not hold %q", file, b.at[1])
				}
				line = strings.Count(content[:i], "\n") + 1
			}
			assertContains(t, b.name, r.stdout, append([]string{fmt.Sprintf("\n%s:%d: ", file, line)}, b.want...)...)
			t.Logf("%s:\n%s", b.name, r.stdout)
		})
	}
}

// gitlabRepo is the GitLab CI job of docs/preflight.md in a repository's
// .gitlab-ci.yml, with the example's configuration and lock.
func gitlabRepo(t *testing.T) *doctorRepo {
	t.Helper()
	doc := string(readFile(t, "../../docs/preflight.md"))
	_, section, _ := strings.Cut(doc, "\n## In GitLab CI\n")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/preflight.md has no YAML block under \"In GitLab CI\"")
	}
	r := exampleRepo(t)
	delete(r.files, exampleWorkflow)
	r.files[".gitlab-ci.yml"] = block
	return r
}

func TestDoctorOnGitLab(t *testing.T) {
	t.Parallel()
	r := gitlabRepo(t).run(t)
	if r.code != exitOK {
		t.Fatalf("doctor on the GitLab job of docs/preflight.md: want exit 0, got %s\n%s", r, gitlabRepo(t).files[".gitlab-ci.yml"])
	}
	assertContains(t, "doctor", r.stdout, "the CI gate holds", "gate: .gitlab-ci.yml:", "the script of job mcp-preflight runs: mcpwatch check --strict --format junit",
		"receipt: mcp-receipt.json, kept as an artifact of job mcp-preflight whether the check passes or fails",
		"triggers: job mcp-preflight runs in merge request or branch pipelines and in scheduled ones",
		"credentials: REPORT_API_TOKEN from $REPORT_API_TOKEN (the variables of job mcp-preflight)")

	// The same job from templates: extends:, default: and !reference.
	repo := gitlabRepo(t)
	repo.files[".gitlab-ci.yml"] = `default:
  before_script:
    - go install github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.1.0
.install:
  script:
    - export RECEIPT=mcp-receipt.json
.gate:
  variables:
    REPORT_API_TOKEN: $REPORT_API_TOKEN
  artifacts:
    when: always
    paths: [mcp-receipt.json]
    reports: {junit: [mcp-preflight.xml]}
mcp-preflight:
  extends: .gate
  script:
    - !reference [.install, script]
    - >
      mcpwatch check --strict --format junit --output mcp-preflight.xml
      --receipt "$RECEIPT"
`
	if r := repo.run(t); r.code != exitOK {
		t.Errorf("the job from templates: want exit 0, got %s", r)
	}
}

func TestDoctorOnBrokenGitLabJobs(t *testing.T) {
	t.Parallel()
	const ci = ".gitlab-ci.yml"
	for _, b := range []brokenWorkflow{{
		name: "flags on two commands",
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, ci, " --receipt mcp-receipt.json\n", "\n    - mcpwatch check --receipt mcp-receipt.json\n")
		},
		at: [2]string{ci, "    - mcpwatch check --strict"},
		want: []string{"the mcpwatch check of the script of job mcp-preflight has no --receipt FILE", "(the command at .gitlab-ci.yml:", " has it, but a flag counts only on the command that checks)",
			"fix: add --receipt mcp-receipt.json to that same command"},
	}, {
		name:   "no artifacts",
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, ci, "  artifacts:\n", "  artifacts_:\n") },
		at:     [2]string{ci, "mcp-preflight:"},
		want:   []string{"job mcp-preflight keeps no artifacts: the receipt mcp-receipt.json is lost with the runner", "fix: add to job mcp-preflight: artifacts: when: always, paths: [mcp-receipt.json]"},
	}, {
		name:   "artifacts only on success",
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, ci, "    when: always\n", "") },
		at:     [2]string{ci, "artifacts:"},
		want:   []string{"job mcp-preflight keeps its artifacts only when it passes (when: on_success, the default)", "fix: set when: always"},
	}, {
		name:   "no schedule",
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, ci, "    - if: $CI_PIPELINE_SOURCE == \"schedule\"", "") },
		at:     [2]string{ci, "mcp-preflight:"},
		want:   []string{"job mcp-preflight does not run in scheduled pipelines", `fix: let its rules: run it for schedules`},
	}, {
		name: "only merge requests",
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, ci, "  rules:\n", "  only: [merge_requests]\n  rules_:\n")
		},
		at:   [2]string{ci, "mcp-preflight:"},
		want: []string{"job mcp-preflight does not run in scheduled pipelines"},
	}, {
		name: "a variable missing",
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, ci, "    REPORT_API_TOKEN: $REPORT_API_TOKEN", "    OTHER: x")
		},
		at:   [2]string{ci, "mcp-preflight:"},
		want: []string{`${REPORT_API_TOKEN}, which server "report" (header:Authorization) reads, is not set in the variables: of job mcp-preflight or of the file`, "fix: add REPORT_API_TOKEN: $REPORT_API_TOKEN to the variables: of job mcp-preflight"},
	}, {
		name: "in after_script",
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, ci, "  script:\n    - mcpwatch check", "  script:\n    - echo checking\n  after_script:\n    - mcpwatch check")
		},
		at:   [2]string{ci, "    - mcpwatch check"},
		want: []string{"job mcp-preflight runs mcpwatch check in after_script:, whose exit status GitLab ignores"},
	}, {
		name: "allowed to fail",
		break_: func(t *testing.T, r *doctorRepo) {
			r.edit(t, ci, "  timeout: 15m\n", "  timeout: 15m\n  allow_failure: true\n")
		},
		at:   [2]string{ci, "allow_failure: true"},
		want: []string{"allow_failure: true on job mcp-preflight: a failing check does not fail the run"},
	}, {
		name:   "no JUnit report",
		break_: func(t *testing.T, r *doctorRepo) { r.edit(t, ci, " --format junit --output mcp-preflight.xml", "") },
		at:     [2]string{ci, "    - mcpwatch check"},
		want:   []string{"writes no JUnit report (--format junit --output FILE): the merge request shows nothing of the check"},
	}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			repo := gitlabRepo(t)
			b.break_(t, repo)
			r := repo.run(t)
			if r.code != exitConfig {
				t.Fatalf("want exit 78, got %s", r)
			}
			file, line := b.at[0], 1
			if b.at[1] != "" {
				content := repo.files[file]
				line = strings.Count(content[:strings.Index(content, b.at[1])], "\n") + 1
			}
			assertContains(t, b.name, r.stdout, append([]string{fmt.Sprintf("\n%s:%d: ", file, line)}, b.want...)...)
			t.Logf("%s:\n%s", b.name, r.stdout)
		})
	}
}

// Nothing a workflow holds reaches the terminal unescaped: a file name
// that is a workflow command, a step name with an escape sequence and a
// bidirectional override, a command with a line break in a quoted word.
func TestDoctorEscapesWhatWorkflowsHold(t *testing.T) {
	t.Parallel()
	repo := exampleRepo(t)
	hostile := ".github/workflows/::error file=x::pwned.yml"
	repo.files[hostile] = strings.NewReplacer(
		"- name: MCP preflight", "- name: \"\\e]8;;https://evil.example\\e\\\\MCP\\u202e preflight\"",
		"run: mcpwatch check --strict --format github --receipt mcp-receipt.json", "run: mcpwatch check --format github --receipt \"a\\n::error::b\"",
	).Replace(repo.files[exampleWorkflow])
	delete(repo.files, exampleWorkflow)
	for _, format := range []string{"text", "json"} {
		r := repo.run(t, "--format", format)
		if r.code != exitConfig {
			t.Fatalf("want exit 78, got %s", r)
		}
		for _, bad := range []string{"\x1b", "\u202e"} {
			if strings.Contains(r.stdout, bad) {
				t.Errorf("--format %s: the output holds %q:\n%s", format, bad, r.stdout)
			}
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("--format %s: a line is a workflow command: %q", format, line)
			}
		}
		if format == "text" {
			assertContains(t, "text", r.stdout, `\x1b]8;;https://evil.example\x1b\\MCP\u202e preflight`, `a\n::error::b`)
		}
	}
}

// The gate the README's CI section and docs/preflight.md show is the
// example's, the workflow doctor passes: each line of their block, its
// comment left out, is a line of the example's gate step.
func TestDoctorExampleIsWhatTheDocsShow(t *testing.T) {
	t.Parallel()
	example := string(readFile(t, "../../examples/github-actions/mcp-preflight.yml"))
	var lines []string
	for _, l := range strings.Split(example, "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	for _, page := range []string{"README.md", "docs/preflight.md"} {
		doc := string(readFile(t, "../../"+page))
		i := strings.Index(doc, "```yaml\n- name: MCP preflight\n")
		if i < 0 {
			t.Errorf("%s shows no gate step (a yaml block starting - name: MCP preflight)", page)
			continue
		}
		block, _, _ := strings.Cut(doc[i+len("```yaml\n"):], "```")
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			l, _, _ = strings.Cut(l, " #")
			l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
			if !slices.ContainsFunc(lines, func(e string) bool { return strings.TrimPrefix(e, "- ") == l }) {
				t.Errorf("%s shows %q, which examples/github-actions/mcp-preflight.yml does not hold", page, l)
			}
		}
	}
}

// calls: auto is a canary when the server annotates a read-only tool that
// needs no input: doctor, which starts no server, cannot tell, and takes
// it at its word, saying so.
func TestDoctorTakesCallsAutoAtItsWord(t *testing.T) {
	t.Parallel()
	repo := exampleRepo(t)
	repo.edit(t, "mcpwatch.yml", "    contracts: report.tools.json\n", "    calls: auto\n")
	r := repo.run(t)
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "doctor", r.stdout, "canaries: report by calls: auto, if it annotates a read-only tool that needs no input")
}

// A configuration named to doctor that is not there is a finding of its
// own, besides what the gate checks.
func TestDoctorNamedConfigurationMissing(t *testing.T) {
	t.Parallel()
	r := exampleRepo(t).run(t, "--config.file", "ci/mcpwatch.yml")
	if r.code != exitConfig {
		t.Fatalf("want exit 78, got %s", r)
	}
	assertContains(t, "doctor", r.stdout, "\nci/mcpwatch.yml:1: there is no configuration to check", "fix: commit ci/mcpwatch.yml, or name the configuration the gate must check")
}

// An agent's .mcp.json alone, as most repositories have it: the canary of
// its server with a token is the starter contracts file mcpwatch init
// writes beside the lock, which every command reads.
func TestDoctorOnAPlainMcpJSON(t *testing.T) {
	t.Parallel()
	repo := exampleRepo(t)
	delete(repo.files, "mcpwatch.yml")
	delete(repo.files, "report.tools.json")
	repo.edit(t, ".mcp.json", "  \"mcpServers\": {\n", `  "mcpServers": {
    "report": {
      "type": "http",
      "url": "https://reports.example.com/mcp",
      "headers": {"Authorization": "Bearer ${REPORT_API_TOKEN}"}
    },
`)
	r := repo.run(t)
	if r.code != exitConfig {
		t.Fatalf("without a canary: want exit 78, got %s", r)
	}
	assertContains(t, "without a canary", r.stdout, "\n.mcp.json:3: server \"report\" is given header:Authorization; no canary can see this server's credential",
		`fix: give server "report" a canary: run mcpwatch init, which writes mcp-contracts/report.tools.json`)

	repo.files["mcp-contracts/report.tools.json"] = string(readFile(t, "../../examples/report.tools.json"))
	r = repo.run(t)
	if r.code != exitOK {
		t.Fatalf("with its starter file: want exit 0, got %s", r)
	}
	assertContains(t, "with its starter file", r.stdout, "configuration: .mcp.json (2 servers)",
		"contracts: mcp-contracts/report.tools.json, tracked by git", "canaries: report by fetch_daily_report, list_report_dates")
}

// A server whose credential its issuer checks is watched without a
// canary: doctor, which reads no secret, says where the credential will be
// checked (when its value has the service's format), instead of asking
// for a contract.
func TestDoctorIssuerWatchesTheCredential(t *testing.T) {
	t.Parallel()
	repo := exampleRepo(t)
	delete(repo.files, "mcpwatch.yml")
	delete(repo.files, "report.tools.json")
	repo.files["mcp-contracts/report.tools.json"] = string(readFile(t, "../../examples/report.tools.json"))
	repo.edit(t, ".mcp.json", "  \"mcpServers\": {\n", `  "mcpServers": {
    "report": {
      "type": "http",
      "url": "https://reports.example.com/mcp",
      "headers": {"Authorization": "Bearer ${REPORT_API_TOKEN}"}
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}
    },
`)
	repo.edit(t, "mcp-tools.lock.json", "  \"memory\": [\n", "  \"github\": [\"search_repositories\"],\n  \"memory\": [\n")
	repo.edit(t, exampleWorkflow, "          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n",
		"          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n          GITHUB_PERSONAL_ACCESS_TOKEN: ${{ secrets.GITHUB_PERSONAL_ACCESS_TOKEN }}\n")
	r := repo.run(t)
	if r.code != exitOK {
		t.Fatalf("want exit 0, got %s", r)
	}
	assertContains(t, "doctor", r.stdout,
		"canaries: github by its issuer (env:GITHUB_PERSONAL_ACCESS_TOKEN -> api.github.com GET /rate_limit, if it has GitHub's format), report by fetch_daily_report, list_report_dates")
}

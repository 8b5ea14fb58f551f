package doctor

import (
	"testing"
)

const onKey = "on:\n  pull_request:\n  schedule:\n    - cron: \"17 5 * * *\"\n"

// A GitHub gate runs on pull requests and on a schedule, or its workflow
// says why not; and a pull_request trigger that skips updates or filters
// out the gate's own files is a finding at the line to change.
func TestTriggers(t *testing.T) {
	t.Parallel()
	judgeChanges(t, systemGitHub, nil, []change{
		{"push only", "", onKey, "on: push\n",
			&want{"triggers", githubGate, 2, "the workflow runs on push, not on pull requests: a change that breaks a server merges unchecked", "add pull_request: under on:"}, ""},
		{"a list without a schedule", "", onKey, "on: [pull_request, push]\n",
			&want{"triggers", githubGate, 2, "the workflow runs on pull_request, push, with no schedule", `schedule: - cron: "17 5 * * *"`}, ""},
		{"pull_request_target", "", onKey, "on:\n  pull_request_target:\n  schedule:\n    - cron: '0 5 * * *'\n",
			&want{"triggers", githubGate, 2, "(pull_request_target runs the base branch's workflow on the base branch's files, not the pull request's)", "add pull_request: under on:"}, ""},
		{"types without synchronize", "", onKey, "on:\n  pull_request:\n    types: [opened, reopened]\n  schedule:\n    - cron: '0 5 * * *'\n",
			&want{"triggers", githubGate, 4, "the workflow runs on pull requests only when they are opened, reopened, not synchronize", "add synchronize to pull_request: types:"}, ""},
		{"paths that leave out the lock", "", onKey, "on:\n  pull_request:\n    paths: ['**.yml', 'report.tools.json']\n  schedule:\n    - cron: '0 5 * * *'\n",
			&want{"triggers", githubGate, 4, "the pull_request paths: filter leaves out mcp-tools.lock.json: a pull request that changes only it does not run the check",
				"make pull_request: paths: take mcp-tools.lock.json in"}, ""},
		{"paths-ignore that drops the configuration", "", onKey, "on:\n  pull_request:\n    paths-ignore: ['*.yml', '*.json']\n  schedule:\n    - cron: '0 5 * * *'\n",
			&want{"triggers", githubGate, 4, "the pull_request paths-ignore: filter leaves out mcpwatch.yml, report.tools.json and mcp-tools.lock.json: a pull request that changes only those", ""}, ""},
		{"paths that take every gate file", "", onKey, "on:\n  pull_request:\n    paths: ['**.yml', '**.json']\n  schedule:\n    - cron: '0 5 * * *'\n",
			nil, "triggers: pull_request, schedule; schedule 0 5 * * *"},
		{"no schedule, waived", "", onKey, "on: # mcpwatch-doctor: no-schedule because mcpwatch serve watches these servers\n  pull_request:\n",
			nil, "triggers: no schedule, because the workflow says: because mcpwatch serve watches these servers"},
		{"no pull request, waived in a comment under on:", "", onKey, "on:\n  # mcpwatch-doctor: no-pull-request: the servers are the team's own\n  schedule:\n    - cron: '0 5 * * *'\n",
			nil, "triggers: no pull request, because the workflow says: the servers are the team's own"},
		{"a waiver without a reason", "", onKey, "on: # mcpwatch-doctor: no-schedule\n  pull_request:\n",
			&want{"triggers", githubGate, 2, "the comment mcpwatch-doctor: no-schedule gives no reason", "# mcpwatch-doctor: no-schedule because ..."}, ""},
		{"no on: at all", "", onKey, "",
			&want{"triggers", githubGate, 1, "the workflow runs on no event, not on pull requests", ""}, ""},
	})
}

// The receipt is uploaded by a later step of the gate's job, also when
// the check fails; each way it is not is a finding that says which step
// does what.
func TestReceiptUpload(t *testing.T) {
	t.Parallel()
	const upload = "      - name: Keep the receipt\n        if: always()\n        uses: actions/upload-artifact@v4\n        with:\n          name: mcp-receipt\n          path: mcp-receipt.json\n"
	// upload moved before the check, for the change named so
	before := func(t *testing.T, c change, r *gateRepo) {
		if c.name == "before the check" {
			r.editCI(t, "      - name: MCP preflight\n", upload+"      - name: MCP preflight\n")
		}
	}
	judgeChanges(t, systemGitHub, before, []change{
		{"no upload", "", upload, "",
			&want{"receipt", githubGate, 15, `no step after the step "MCP preflight" of job mcp-preflight uploads its receipt mcp-receipt.json: it is lost with the runner`,
				"add a step after it to job mcp-preflight: uses: actions/upload-artifact@v4, if: always(), with: name: mcp-receipt, path: mcp-receipt.json"}, ""},
		{"only when the check passed", "", "        if: always()\n", "",
			&want{"receipt", githubGate, 16, `the step "Keep the receipt" uploads the receipt mcp-receipt.json only when every step before it passed`,
				`give the step "Keep the receipt" the condition if: always()`}, ""},
		{"if: success()", "", "if: always()", "if: success()",
			&want{"receipt", githubGate, 17, "only when every step before it passed", ""}, ""},
		{"another file", "", "path: mcp-receipt.json", "path: reports/",
			&want{"receipt", githubGate, 15, `(the step "Keep the receipt" uploads reports/, which does not take it)`, ""}, ""},
		{"before the check", "", upload, "",
			&want{"receipt", githubGate, 0, `(the step "Keep the receipt" uploads it, but before the check writes it)`, ""}, ""},
		{"if: failure() still uploads a failed check's", "", "if: always()", "if: failure()", nil,
			`receipt: mcp-receipt.json, uploaded by the step "Keep the receipt" (line 16) whether the check passes or fails`},
		{"a directory and a glob", "", "path: mcp-receipt.json", "path: |\n            out/\n            *.json", nil, "receipt: mcp-receipt.json, uploaded"},
		// the check writes ci/mcp-receipt.json, which the upload of
		// mcp-receipt.json does not take
		{"a receipt in a working directory", "", "        run: mcpwatch check", "        working-directory: ci\n        run: mcpwatch check -c ../mcpwatch.yml",
			&want{"receipt", githubGate, 0, "uploads its receipt ci/mcp-receipt.json", "path: ci/mcp-receipt.json"}, ""},
	})
}

// The filters GitHub applies to a pull request's files, and the upload
// patterns of actions/upload-artifact, as doctor reads them at their
// edges: a class, "?" and "+" in a filter, a "[" no "]" closes, an
// exclusion that a later inclusion overrides.
func TestPathPatternEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		filter   bool // a pull_request filter; else an upload
		patterns []string
		file     string
		want     bool
	}{
		{true, []string{"mcp-tools.lock.jso[mn]"}, "mcp-tools.lock.json", true},
		{true, []string{"mcp-tools.lock.jso[!n]"}, "mcp-tools.lock.json", true}, // GitHub's filters have no negated class: "!" is one of its characters
		{true, []string{"a+.json"}, "aaa.json", true},
		{true, []string{"docs/[.json"}, "docs/[.json", true},
		{true, []string{"!**.json", "mcpwatch.yml"}, "mcpwatch.yml", true},
		{false, []string{"out/r[0-9].json"}, "out/r1.json", true},
		{false, []string{"out/r[!0-9].json"}, "out/r1.json", false},
		{false, []string{"r?.json"}, "r/.json", false},
		{false, []string{"# a comment", "r.json"}, "r.json", true},
		{false, []string{"/abs/r.json"}, "/abs/r.json", true},
	} {
		got := uploadCovers(tc.patterns, tc.file)
		if tc.filter {
			got = filterMatches(tc.patterns, tc.file)
		}
		if got != tc.want {
			t.Errorf("filter %v, patterns %q, file %q: %v, want %v", tc.filter, tc.patterns, tc.file, got, tc.want)
		}
	}
}

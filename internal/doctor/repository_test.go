package doctor

import (
	"errors"
	"strings"
	"testing"
)

// What the gate relies on in the repository: the configuration loads and
// is tracked, the lock exists, is tracked and covers every server, the
// contracts are tracked and cover the locked tools, and a canary watches
// each credential. Each way one fails is a finding at its file and line,
// with the command that fixes it.
func TestRepositoryFindings(t *testing.T) {
	t.Parallel()
	const probeConfig = `{"servers": [{"name": "datadog", "target": "https://mcp.example.com/mcp",
  "expectedTools": ["logs_query", "metrics_query"]}]}
`
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, r *gateRepo)
		want    want
	}{
		{"no configuration", func(t *testing.T, r *gateRepo) { delete(r.files, "mcpwatch.yml") },
			want{"configuration", ".mcp.json", 1, "there is no configuration to check: no mcpwatch.yml given and no .mcp.json in", "commit the agent's .mcp.json (or an mcpwatch.yml) at the repository's top"}},
		{"a configuration that does not load", func(t *testing.T, r *gateRepo) {
			r.edit(t, "mcpwatch.yml", "    contracts: report.tools.json\n", "    contracts: report.tools.json\n    timout: 10s\n")
		}, want{"configuration", "mcpwatch.yml", 12, "the configuration the gate checks cannot be loaded, so every check fails (exit 78): servers.report.timout:",
			"mcpwatch config check names each problem"}},
		{"a contracts file that is not there", func(t *testing.T, r *gateRepo) { delete(r.files, "report.tools.json") },
			want{"configuration", "mcpwatch.yml", 0, "cannot be loaded", "fix it: mcpwatch config check"}},
		{"the configuration not tracked", func(t *testing.T, r *gateRepo) { r.untracked = []string{"mcpwatch.yml"} },
			want{"configuration", "mcpwatch.yml", 1, "the configuration mcpwatch.yml is not tracked by git: the CI's checkout does not have it",
				"git add mcpwatch.yml and commit it (and see that .gitignore does not leave it out)"}},
		{"git cannot answer", func(t *testing.T, r *gateRepo) { r.gitErr = errors.New("fatal: not a git repository") },
			want{"lock", "mcp-tools.lock.json", 1, "cannot tell which files git tracks (fatal: not a git repository): the CI checks out only those",
				"run mcpwatch doctor at the top of a git repository"}},
		{"no lock", func(t *testing.T, r *gateRepo) { delete(r.files, "mcp-tools.lock.json") },
			want{"lock", "mcp-tools.lock.json", 1, "there is no lock at mcp-tools.lock.json: mcpwatch check fails every run (exit 78)",
				"run mcpwatch lock, review mcp-tools.lock.json and commit it"}},
		{"a lock that does not parse", func(t *testing.T, r *gateRepo) { r.files["mcp-tools.lock.json"] = "{\"memory\": [" },
			want{"lock", "mcp-tools.lock.json", 1, "the lock cannot be read, so every check fails (exit 78)", "write it again with mcpwatch lock"}},
		{"the lock not tracked", func(t *testing.T, r *gateRepo) { r.untracked = []string{"mcp-tools.lock.json"} },
			want{"lock", "mcp-tools.lock.json", 1, "the lock mcp-tools.lock.json is not tracked by git", "git add mcp-tools.lock.json"}},
		{"a server the lock does not cover", func(t *testing.T, r *gateRepo) {
			r.edit(t, "mcp-tools.lock.json", "  \"memory\": [\n    \"create_entities\",\n    \"read_graph\"\n  ],\n", "")
		}, want{"lock", "mcp-tools.lock.json", 1, "the lock has no entry for memory: no tool of that server is enforced",
			"run mcpwatch lock --server memory, review the lock and commit it"}},
		{"the contracts file not tracked", func(t *testing.T, r *gateRepo) { r.untracked = []string{"report.tools.json"} },
			want{"contracts", "report.tools.json", 1, `the contracts file report.tools.json of server "report" is not tracked by git`,
				"git add report.tools.json and commit it"}},
		{"a locked tool without a contract", func(t *testing.T, r *gateRepo) {
			r.edit(t, "report.tools.json", "\"list_report_dates\": {\n", "\"list_report_dates\": {\n      \"input\": {\"day\": \"<fill in: a date>\"},\n")
		}, want{"contracts", "report.tools.json", 1, "mcpwatch check --strict fails on the files alone (exit 78), whatever the servers answer: report:",
			`in report.tools.json, fill in the "<fill in ...>" values of each contract named`}},
		{"a locked server the configuration no longer defines", func(t *testing.T, r *gateRepo) {
			r.edit(t, "mcp-tools.lock.json", "{\n", "{\n  \"gone\": [\"x\"],\n")
		}, want{"contracts", "mcp-tools.lock.json", 1, "fails on the files alone (exit 78), whatever the servers answer: gone:",
			`add server "gone" back to mcpwatch.yml, or relock without it: mcpwatch lock, then commit the lock`}},
		{"a credential no canary watches", func(t *testing.T, r *gateRepo) {
			r.edit(t, "mcpwatch.yml", "    contracts: report.tools.json\n", "")
			delete(r.files, "report.tools.json")
		}, want{"canary", "mcpwatch.yml", 7, `server "report" is given`,
			`give server "report" a canary: run mcpwatch init`}},
		{"expected tools the lock does not hold", func(t *testing.T, r *gateRepo) {
			r.files["mcp-probe.config.json"] = probeConfig
			r.files["mcp-tools.lock.json"] = `{"datadog": ["logs_query"]}` + "\n"
			r.config = "mcp-probe.config.json"
			r.editCI(t, "mcpwatch check --strict", "mcpwatch check -c mcp-probe.config.json --strict")
		}, want{"contracts", "mcp-probe.config.json", 2, `server "datadog" expects metrics_query, which the lock does not hold: check does not fail when it goes`,
			"run mcpwatch lock --server datadog once the server lists it, and commit the lock"}},
		{"doctor named a configuration that is not there", func(t *testing.T, r *gateRepo) { r.config = "agents/.mcp.json" },
			want{"configuration", "agents/.mcp.json", 1, "there is no configuration to check",
				"commit agents/.mcp.json, or name the configuration the gate must check: mcpwatch doctor --config.file PATH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, systemGitHub)
			tc.prepare(t, r)
			rep := r.examine(t)
			if rep.OK {
				t.Fatalf("the gate holds:\n%s", text(t, rep))
			}
			findingOf(t, rep, tc.want)
		})
	}
}

// A finding names the repository's files as the repository does, relative
// to its top, as configFindings and checkStatic take care to: the path of
// the folder doctor ran in says nothing to a reader of the CI's log.
func TestFindingsNameRepositoryPathsRelative(t *testing.T) {
	t.Parallel()
	for name, prepare := range map[string]func(t *testing.T, r *gateRepo){
		"a lock that does not parse": func(t *testing.T, r *gateRepo) { r.files["mcp-tools.lock.json"] = "{\"memory\": [" },
		"no configuration":           func(t *testing.T, r *gateRepo) { delete(r.files, "mcpwatch.yml") },
		"only disabled contracts": func(t *testing.T, r *gateRepo) {
			r.files["report.tools.json"] = `{"tools": {"fetch_daily_report": {"disabled": true}, "list_report_dates": {"disabled": true}}}`
		},
	} {
		r := newRepo(t, systemGitHub)
		prepare(t, r)
		rep := r.examine(t)
		for _, f := range rep.Findings {
			if strings.Contains(f.Problem+f.Fix, r.dir) {
				t.Errorf("%s: a finding names the repository by its absolute path: %s", name, f.Problem)
			}
		}
	}
}

// A server given a credential is watched by a canary only when a contract
// is called: one still waiting for its input, or disabled, is none, and
// the finding says which.
func TestCanaryFindings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, contracts string
		problem         string // "" when the credential is watched
		verified        string
	}{
		{"a contract with its input", "", "", "canaries: report by fetch_daily_report, list_report_dates ("},
		{"a disabled contract only", `{"tools": {"fetch_daily_report": {"disabled": true, "input": {"date": "2026-08-01"}}, "list_report_dates": {"disabled": true}}}`,
			`server "report" is given header:Authorization; no canary can see this server's credential: none of its tools is annotated read-only; proposed, disabled in`, ""},
		{"calls: auto", "auto", "", "canaries: report by calls: auto, if it annotates a read-only tool that needs no input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, systemGitHub)
			switch tc.contracts {
			case "":
			case "auto":
				r.edit(t, "mcpwatch.yml", "    contracts: report.tools.json\n", "    calls: auto\n")
				delete(r.files, "report.tools.json")
			default:
				r.files["report.tools.json"] = tc.contracts
			}
			rep := r.examine(t)
			if tc.problem == "" {
				containsAll(t, "what doctor verified", holds(t, rep), tc.verified)
				return
			}
			findingOf(t, rep, want{"canary", "report.tools.json", 1, tc.problem,
				`enable a contract in report.tools.json for a tool of server "report" that only reads, with an input that works`})
		})
	}
}

package doctor

import (
	"testing"
)

// clientRepo is the fixture with the agent's .mcp.json in place of the
// mcpwatch.yml: its one npx server, and its lock.
func clientRepo(t *testing.T, c change, r *gateRepo) {
	delete(r.files, "mcpwatch.yml")
	delete(r.files, "report.tools.json")
	r.files[".mcp.json"] = `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}` + "\n"
	r.files["agents.json"] = r.files[".mcp.json"]
	r.files["mcp-tools.lock.json"] = `{"memory": ["create_entities", "read_graph"]}` + "\n"
	if c.name == "doctor's MCP_CONFIG names the one intended" {
		r.env = map[string]string{"MCP_CONFIG": "agents.json"}
	}
}

// The configuration a gate checks is the one mcpwatch check chooses where
// it runs, as the step's --config.file, --lock.file and environment
// ($MCP_CONFIG, $MCP_TOOL_LOCK) choose it; the one intended is the one
// check chooses at the repository's top, with doctor's own environment.
func TestConfigurationChosen(t *testing.T) {
	t.Parallel()
	const step = "          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n"
	judgeChanges(t, systemGitHub, clientRepo, []change{
		{"the agent's .mcp.json", "", step, "", nil, "configuration: .mcp.json (1 server), lock mcp-tools.lock.json"},
		{"the step's MCP_CONFIG", "", step, "          MCP_CONFIG: agents.json\n",
			&want{"gate", githubGate, 15, "checks agents.json, not .mcp.json, the configuration mcpwatch check reads at the repository's top",
				"pass --config.file .mcp.json on that command (or, if agents.json is the one meant, run mcpwatch doctor --config.file agents.json)"}, ""},
		{"doctor's MCP_CONFIG names the one intended", "", step, "",
			&want{"gate", githubGate, 14, "checks .mcp.json, not agents.json", "pass --config.file agents.json"}, ""},
		{"the step's MCP_TOOL_LOCK", "", step, "          MCP_TOOL_LOCK: locks/tools.json\n",
			&want{"lock", "locks/tools.json", 1, "there is no lock at locks/tools.json", "run mcpwatch lock, review locks/tools.json and commit it"}, ""},
		{"--lock.file in a working directory", "", "        run: mcpwatch check", "        working-directory: ci\n        run: mcpwatch check -c ../.mcp.json --lock.file l.json",
			&want{"lock", "ci/l.json", 1, "there is no lock at ci/l.json", ""}, ""},
	})
}

// A server an mcpwatch.yml lists under ignore: is not checked, so it needs
// no lock entry, no variable and no canary.
func TestIgnoredServerNotCounted(t *testing.T) {
	t.Parallel()
	judgeChanges(t, systemGitHub, func(t *testing.T, _ change, r *gateRepo) {
		r.edit(t, "mcp-tools.lock.json", ",\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ]", "")
		r.editCI(t, "          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n", "          OTHER: x\n")
	}, []change{
		{"ignore: report", "mcpwatch.yml", "servers:\n", "ignore: [report]\nservers:\n", nil,
			"lock: mcp-tools.lock.json, tracked by git, covers the 1 server checked"},
		{"report not ignored", "mcpwatch.yml", "servers:\n", "servers:\n",
			&want{"lock", "mcp-tools.lock.json", 1, "the lock has no entry for report", "run mcpwatch lock --server report"}, ""},
	})
}

// A GitLab job's extends: that loops, or a !reference to what is not
// there, is read as far as it goes: doctor ends, and judges the rest.
func TestGitLabLoopsEnd(t *testing.T) {
	t.Parallel()
	src := `.a:
  extends: .b
  variables: {A: a}
.b:
  extends: .a
  script: [echo b]
job:
  extends: .a
  script:
    - !reference [.nowhere, script]
    - !reference [.b, script]
    - mcpwatch check
`
	f, err := parseGitLab(".gitlab-ci.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.jobs) != 1 || f.jobs[0].id != "job" || f.jobs[0].steps[0].script != "echo b\nmcpwatch check" {
		t.Fatalf("jobs %+v", f.jobs)
	}
	if env := f.jobs[0].env; len(env) != 1 || env[0].name != "A" {
		t.Errorf("the variables of the extends: loop: %+v", env)
	}
}

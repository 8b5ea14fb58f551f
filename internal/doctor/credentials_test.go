package doctor

import (
	"bytes"
	"strings"
	"testing"
)

const tokenEnv = "        env:\n          REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}\n"

// Where a GitHub gate's step gets the variables the servers read, as
// doctor says it verified; each way of giving it one counts.
func TestCredentialsReachTheStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		old, new string
		verified string
	}{
		{"the step's env", "", "", "credentials: REPORT_API_TOKEN from ${{ secrets.REPORT_API_TOKEN }} (the step's env)"},
		{"the job's env", tokenEnv, "", "credentials: REPORT_API_TOKEN from ${{ secrets.REPORT_API_TOKEN }} (the env of job mcp-preflight)"},
		{"the workflow's env", tokenEnv, "", "credentials: REPORT_API_TOKEN from ${{ vars.TOKEN }} (the workflow's env)"},
		{"written to $GITHUB_ENV by an earlier step", tokenEnv, "",
			`credentials: REPORT_API_TOKEN from ${{ steps.app.outputs.token }} ($GITHUB_ENV, written by the step "token")`},
		{"exported by the step's own script", tokenEnv + "        run: mcpwatch check",
			"        env:\n          T: ${{ secrets.T }}\n        run: |\n          export REPORT_API_TOKEN=\"$T\"\n          mcpwatch check",
			"credentials: REPORT_API_TOKEN from ${T} (the script)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, systemGitHub)
			if tc.old != "" {
				r.editCI(t, tc.old, tc.new)
			}
			switch tc.name {
			case "the job's env":
				r.editCI(t, "    timeout-minutes: 15\n", "    timeout-minutes: 15\n"+strings.ReplaceAll(tokenEnv, "      ", "  "))
			case "the workflow's env":
				r.editCI(t, "jobs:\n", "env:\n  REPORT_API_TOKEN: ${{ vars.TOKEN }}\njobs:\n")
			case "written to $GITHUB_ENV by an earlier step":
				r.editCI(t, "      - name: MCP preflight\n",
					"      - name: token\n        run: echo \"REPORT_API_TOKEN=${{ steps.app.outputs.token }}\" >> \"$GITHUB_ENV\"\n      - name: MCP preflight\n")
			}
			containsAll(t, "what doctor verified", holds(t, r.examine(t)), tc.verified)
		})
	}
}

// A variable a checked server reads that the step is not given, or is
// given empty (CI's unset secret), is a finding at the line to change; a
// credential written in the file is one too; and what needs no variable
// (a default, a variable of the runner, an ignored server) is none.
func TestCredentialFindings(t *testing.T) {
	t.Parallel()
	judgeChanges(t, systemGitHub, nil, []change{
		{"not given", "", tokenEnv, "",
			&want{"credentials", githubGate, 12,
				`${REPORT_API_TOKEN}, which server "report" (header:Authorization) reads, is not set in the env: of the step "MCP preflight" of job mcp-preflight, nor by an earlier step: the check runs without it`,
				`add REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }} to the env: of the step "MCP preflight" of job mcp-preflight (and the secret to the repository's Settings > Secrets and variables > Actions)`}, ""},
		{"given empty", "", "REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}", `REPORT_API_TOKEN: ""`,
			&want{"credentials", githubGate, 14, "is set to an empty value in the step's env", "add REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}"}, ""},
		{"written in plain text", "", "REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}", "REPORT_API_TOKEN: sk-live-0123456789abcdef",
			&want{"credentials", githubGate, 14, "REPORT_API_TOKEN is written in plain text in the step's env: a credential in the repository is read by everyone",
				"write REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }} instead, with the value in the repository's secrets; then rotate the credential"}, ""},
		{"required with a message", "mcpwatch.yml", "${REPORT_API_TOKEN}", "${REPORT_API_TOKEN:?set the report token}",
			nil, ""},
		{"required and not given", "mcpwatch.yml", "Bearer ${REPORT_API_TOKEN}", "Bearer ${REPORT_KEY:?set the report key}",
			&want{"credentials", githubGate, 12, `${REPORT_KEY}, which server "report" (header:Authorization) reads, is not set`, "add REPORT_KEY: ${{ secrets.REPORT_KEY }}"}, ""},
		{"a second one found once the first is given", "mcpwatch.yml", "Bearer ${REPORT_API_TOKEN}", "Bearer ${REPORT_API_TOKEN}${REPORT_SUFFIX}",
			&want{"credentials", githubGate, 12, "${REPORT_SUFFIX}", "add REPORT_SUFFIX:"}, ""},
		{"a default needs nothing", "mcpwatch.yml", "${REPORT_API_TOKEN}", "${REPORT_API_TOKEN:-anonymous}", nil, ""},
		{"a variable of the runner needs nothing", "mcpwatch.yml", `args: ["-y", "@modelcontextprotocol/server-memory"]`,
			`args: ["-y", "@modelcontextprotocol/server-memory", "${RUNNER_TEMP}/memory.json"]`, nil, ""},
	})
}

// A credential written in a workflow is named, never shown: its value is
// in no finding, no line of what doctor verified, no report, text or JSON.
func TestCredentialValueNeverShown(t *testing.T) {
	t.Parallel()
	const value = "sk-live-0123456789abcdef"
	for _, system := range []string{systemGitHub, systemGitLab} {
		r := newRepo(t, system)
		if system == systemGitLab {
			r.editCI(t, "REPORT_API_TOKEN: $REPORT_API_TOKEN", "REPORT_API_TOKEN: "+value)
		} else {
			r.editCI(t, "REPORT_API_TOKEN: ${{ secrets.REPORT_API_TOKEN }}", "REPORT_API_TOKEN: "+value)
		}
		rep := r.examine(t)
		f := findingOf(t, rep, want{"credentials", r.ci(), 0, "REPORT_API_TOKEN is written in plain text", "rotate the credential"})
		var js bytes.Buffer
		if err := WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		for what, out := range map[string]string{"the finding": f.Problem + f.Fix, "the text report": text(t, rep), "the JSON report": js.String()} {
			if strings.Contains(out, value) || strings.Contains(out, "sk-live") {
				t.Errorf("%s: %s shows the credential:\n%s", system, what, out)
			}
		}
	}
}

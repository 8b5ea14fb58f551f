package doctor

import (
	"fmt"
	"strings"
	"testing"
)

// Each way a GitLab job falls short as a gate is a finding at the line
// to change, in GitLab's words (allow_failure, artifacts:, rules:).
func TestGitLabFindings(t *testing.T) {
	t.Parallel()
	const cmd = "mcpwatch check --strict --format junit --output mcp-preflight.xml --receipt mcp-receipt.json"
	judgeChanges(t, systemGitLab, func(t *testing.T, c change, r *gateRepo) {
		if strings.Contains(c.new, "no-schedule") {
			r.editCI(t, "    - if: $CI_PIPELINE_SOURCE == \"schedule\"\n", "")
		}
	}, []change{
		{"no JUnit report", "", cmd, "mcpwatch check --strict --format junit --receipt mcp-receipt.json",
			&want{"gate", ".gitlab-ci.yml", 10, "writes no JUnit report (--format junit --output FILE)", "add --format junit --output mcp-preflight.xml to that same command"}, ""},
		{"the report not among reports: junit:", "", "junit: mcp-preflight.xml", "junit: other.xml",
			&want{"gate", ".gitlab-ci.yml", 11, "the JUnit report mcp-preflight.xml of job mcp-preflight is not among its artifacts: reports: junit:", "add reports: junit: mcp-preflight.xml"}, ""},
		{"allow_failure", "", "  timeout: 15m\n", "  timeout: 15m\n  allow_failure: true\n",
			&want{"gate", ".gitlab-ci.yml", 4, "allow_failure: true on job mcp-preflight: a failing check does not fail the run", "remove allow_failure from job mcp-preflight"}, ""},
		{"allow_failure on exit code 78", "", "  timeout: 15m\n", "  timeout: 15m\n  allow_failure:\n    exit_codes: [1, 78]\n",
			&want{"gate", ".gitlab-ci.yml", 5, "allow_failure: exit_codes 78 on job mcp-preflight", ""}, ""},
		{"in after_script", "", "  script:\n    - " + cmd, "  script:\n    - echo hi\n  after_script:\n    - " + cmd,
			&want{"gate", ".gitlab-ci.yml", 12, "job mcp-preflight runs mcpwatch check in after_script:, whose exit status GitLab ignores", "move the command to the job's script:"}, ""},
		{"no artifacts", "", "  artifacts:\n    when: always\n    paths: [mcp-receipt.json]\n    reports:\n      junit: mcp-preflight.xml\n", "",
			&want{"receipt", ".gitlab-ci.yml", 1, "job mcp-preflight keeps no artifacts: the receipt mcp-receipt.json is lost with the runner", "artifacts: when: always, paths: [mcp-receipt.json]"}, ""},
		{"artifacts without the receipt", "", "paths: [mcp-receipt.json]", "paths: [reports/]",
			&want{"receipt", ".gitlab-ci.yml", 11, "the artifacts: paths: of job mcp-preflight (reports/) do not take the receipt mcp-receipt.json", "add mcp-receipt.json to the artifacts: paths:"}, ""},
		{"artifacts kept only on success", "", "    when: always\n", "",
			&want{"receipt", ".gitlab-ci.yml", 11, "keeps its artifacts only when it passes (when: on_success, the default)", "set when: always"}, ""},
		{"artifacts when: on_success", "", "when: always", "when: on_success",
			&want{"receipt", ".gitlab-ci.yml", 12, "(when: on_success)", "set when: always under the artifacts: of job mcp-preflight"}, ""},
		{"no merge request pipelines", "", "    - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"\n", "",
			&want{"triggers", ".gitlab-ci.yml", 1, "job mcp-preflight runs neither in merge request pipelines nor in branch pipelines", `- if: $CI_PIPELINE_SOURCE == "merge_request_event"`}, ""},
		{"no scheduled pipelines", "", "    - if: $CI_PIPELINE_SOURCE == \"schedule\"\n", "",
			&want{"triggers", ".gitlab-ci.yml", 1, "job mcp-preflight does not run in scheduled pipelines", `- if: $CI_PIPELINE_SOURCE == "schedule"`}, ""},
		{"a waiver without a reason", "", "mcp-preflight:\n  image", "mcp-preflight: # mcpwatch-doctor: no-schedule\n  image",
			&want{"triggers", ".gitlab-ci.yml", 1, "the comment mcpwatch-doctor: no-schedule gives no reason", "# mcpwatch-doctor: no-schedule because ..."}, ""},
		{"a credential not given", "", "  variables:\n    REPORT_API_TOKEN: $REPORT_API_TOKEN\n", "",
			&want{"credentials", ".gitlab-ci.yml", 1, "${REPORT_API_TOKEN}, which server \"report\" (header:Authorization) reads, is not set in the variables: of job mcp-preflight or of the file",
				"add REPORT_API_TOKEN: $REPORT_API_TOKEN to the variables: of job mcp-preflight, with its value a masked variable"}, ""},
		{"a credential in plain text", "", "REPORT_API_TOKEN: $REPORT_API_TOKEN", "REPORT_API_TOKEN: glpat-abc123",
			&want{"credentials", ".gitlab-ci.yml", 5, "REPORT_API_TOKEN is written in plain text in the variables of job mcp-preflight",
				"make REPORT_API_TOKEN a masked variable in the project's Settings > CI/CD > Variables; then rotate the credential"}, ""},
		{"a job timeout too short", "", "timeout: 15m", "timeout: 4 minutes",
			&want{"timeout", ".gitlab-ci.yml", 3, "job mcp-preflight's timeout (4 minutes) leaves no room for the check", "raise the timeout of job mcp-preflight to at least 7m"}, ""},
	})
}

// A job waived from a trigger with a reason holds, and says why in what
// doctor verified.
func TestGitLabWaiver(t *testing.T) {
	t.Parallel()
	rep := newRepo(t, systemGitLab).editCI(t, "mcp-preflight:\n", "mcp-preflight: # mcpwatch-doctor: no-schedule because the daemon watches them\n").
		editCI(t, "    - if: $CI_PIPELINE_SOURCE == \"schedule\"\n", "").examine(t)
	containsAll(t, "what doctor verified", holds(t, rep), "triggers: no schedule, because the workflow says: because the daemon watches them")
}

// The job doctor reads is the one GitLab runs: extends: merged in (a
// mapping deeply, anything else replaced), default: applied unless the
// job's inherit: refuses it, !reference resolved, hidden jobs and
// keywords not jobs, and a job without script: (a trigger) none.
func TestParseGitLab(t *testing.T) {
	t.Parallel()
	src := `default:
  before_script: [echo default]
  timeout: 30m
  artifacts:
    when: always
    paths: [default.json]
variables:
  GLOBAL: g
.base:
  variables: {A: base, B: base}
  script: [echo base]
.setup:
  script:
    - export R=r.json
job:
  extends: .base
  variables: {B: job}
  script:
    - !reference [.setup, script]
    - mcpwatch check --receipt $R
isolated:
  inherit:
    default: [timeout]
  script: |
    one
    two
trigger:
  trigger: {project: other}
stages: [test]
`
	f, err := parseGitLab(".gitlab-ci.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range f.jobs {
		var env []string
		for _, v := range j.env {
			env = append(env, v.name+"="+v.value)
		}
		s := fmt.Sprintf("%s@%d env=%s timeout=%s", j.id, j.line, strings.Join(env, ","), j.timeout.value)
		if j.artifacts != nil {
			s += fmt.Sprintf(" artifacts=%s/%s", j.artifacts.when.value, j.artifacts.paths[0].value)
		}
		for _, st := range j.steps {
			s += fmt.Sprintf(" %s@%d%q%v", st.name, st.line, st.script, st.lines)
		}
		got = append(got, s)
	}
	wantJobs := []string{
		`job@15 env=A=base,B=job timeout=30m artifacts=always/default.json script@2"echo default\nexport R=r.json\nmcpwatch check --receipt $R"[2 14 20]`,
		`isolated@21 env= timeout=30m script@24"one\ntwo"[25 26]`,
	}
	if strings.Join(got, "\n") != strings.Join(wantJobs, "\n") {
		t.Errorf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantJobs, "\n"))
	}
	if len(f.env) != 1 || f.env[0].name != "GLOBAL" || f.env[0].scope != "the global variables" {
		t.Errorf("global variables: %+v", f.env)
	}
}

// Whether a job runs in a pipeline of a source, by its rules: (the first
// that matches decides; when: never excludes), else only:/except:, else
// GitLab's default (branch pipelines and schedules).
func TestGitLabRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		job string
		// whether it runs in merge request, push and schedule pipelines
		mr, push, schedule bool
	}{
		{"script: [x]", false, true, true},
		{"rules:\n  - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"", true, false, false},
		{"rules:\n  - if: $CI_PIPELINE_SOURCE == \"schedule\"\n    when: never\n  - when: always", true, true, false},
		{"rules:\n  - if: $CI_PIPELINE_SOURCE != \"schedule\"", true, true, false},
		{"rules:\n  - if: $CI_MERGE_REQUEST_IID", true, false, false},
		{"rules:\n  - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH", false, false, true},
		{"rules:\n  - if: $CI_COMMIT_BRANCH", false, true, true},
		{"rules:\n  - if: $CI_COMMIT_TAG", false, false, false},
		{"rules:\n  - if: $CI_PIPELINE_SOURCE == \"push\" || $CI_PIPELINE_SOURCE == \"schedule\"", false, true, true},
		{"rules:\n  - if: $CI_PIPELINE_SOURCE == \"push\" && $CI_PIPELINE_SOURCE == \"schedule\"", false, false, false},
		{"rules:\n  - changes: [x]", true, true, true},
		{"only: [merge_requests, schedules]", true, false, true},
		{"only:\n  refs: [branches]", false, true, true},
		{"only: [main]", false, true, true},
		{"only: [tags]", false, false, false},
		{"except: [schedules]", false, true, false},
		{"only: [branches]\nexcept: [pushes]", false, false, true},
	} {
		f, err := parseGitLab(".gitlab-ci.yml", []byte("j:\n  script: [x]\n"+indent(tc.job)))
		if err != nil || len(f.jobs) != 1 {
			t.Fatalf("%q: %v %+v", tc.job, err, f)
		}
		j := f.jobs[0]
		got := [3]bool{gitlabRuns(j, sourceMergeRequest), gitlabRuns(j, sourcePush), gitlabRuns(j, sourceSchedule)}
		if got != [3]bool{tc.mr, tc.push, tc.schedule} {
			t.Errorf("%q: runs in merge request, push, schedule pipelines: %v, want %v", tc.job, got, [3]bool{tc.mr, tc.push, tc.schedule})
		}
	}
}

func indent(s string) string {
	if strings.HasPrefix(s, "script:") {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

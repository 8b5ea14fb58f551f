package doctor

import (
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
)

// judgeReceipt: a later step of the same job uploads the receipt (GitHub:
// actions/upload-artifact; GitLab: the job's artifacts:), also when the
// check failed, since that receipt is the one that says why.
func (d *doctor) judgeReceipt(c *candidate) {
	if c.flags.Receipt == "" {
		return // judgeFlags asked for one
	}
	receipt := c.cwdPath(c.flags.Receipt)
	if c.step.job.file.system == systemGitLab {
		d.gitlabArtifacts(c, receipt)
		return
	}
	file, j := c.step.job.file, c.step.job
	var other, before *step
	for _, s := range j.steps {
		if !strings.HasPrefix(s.uses.value, "actions/upload-artifact@") {
			continue
		}
		sc := newScope(s, nil)
		var patterns []string
		for _, line := range strings.Split(s.with["path"].value, "\n") {
			if p, _ := resolveString(line, sc); p != "" {
				patterns = append(patterns, p)
			}
		}
		switch {
		case !uploadCovers(patterns, receipt):
			if s.index > c.step.index && other == nil {
				other = s
			}
		case s.index <= c.step.index:
			before = s
		case !runsOnFailure(s.ifCond.value):
			line := s.line
			if s.ifCond.set() {
				line = s.ifCond.line
			}
			c.add(finding("receipt", file.path, line,
				fmt.Sprintf("the step %q uploads the receipt %s only when every step before it passed: a failing check ends the job first, and its receipt, the one that says why, is lost", s.name, receipt),
				fmt.Sprintf("give the step %q the condition if: always()", s.name)))
			return
		default:
			c.note("receipt: %s, uploaded by the step %q (line %d) whether the check passes or fails", receipt, s.name, s.line)
			return
		}
	}
	problem := fmt.Sprintf("no step after %s uploads its receipt %s: it is lost with the runner", c.stepName(), receipt)
	switch {
	case before != nil:
		problem += fmt.Sprintf(" (the step %q uploads it, but before the check writes it)", before.name)
	case other != nil:
		problem += fmt.Sprintf(" (the step %q uploads %s, which does not take it)", other.name, strings.TrimSpace(other.with["path"].value))
	}
	c.add(finding("receipt", file.path, c.line, problem,
		fmt.Sprintf("add a step after it to job %s: uses: actions/upload-artifact@v4, if: always(), with: name: mcp-receipt, path: %s", j.id, receipt)))
}

// runsOnFailure: a GitHub step condition under which the step runs after
// a failed step.
func runsOnFailure(cond string) bool {
	for _, f := range []string{"always()", "failure()", "!cancelled()", "! cancelled()"} {
		if strings.Contains(cond, f) {
			return true
		}
	}
	return false
}

// gitlabArtifacts: the job keeps the receipt (and the JUnit report) as
// artifacts, also when it fails.
func (d *doctor) gitlabArtifacts(c *candidate, receipt string) {
	file, j := c.step.job.file, c.step.job
	a := j.artifacts
	if a == nil {
		c.add(finding("receipt", file.path, j.line,
			fmt.Sprintf("job %s keeps no artifacts: the receipt %s is lost with the runner", j.id, receipt),
			fmt.Sprintf("add to job %s: artifacts: when: always, paths: [%s]", j.id, receipt)))
		return
	}
	var paths []string
	for _, p := range a.paths {
		paths = append(paths, p.value)
	}
	if !uploadCovers(paths, receipt) {
		c.add(finding("receipt", file.path, a.line,
			fmt.Sprintf("the artifacts: paths: of job %s (%s) do not take the receipt %s: it is lost with the runner", j.id, strings.Join(paths, ", "), receipt),
			fmt.Sprintf("add %s to the artifacts: paths: of job %s", receipt, j.id)))
	} else if w := a.when.value; w != "always" && w != "on_failure" {
		line := a.line
		if a.when.set() {
			line = a.when.line
		}
		c.add(finding("receipt", file.path, line,
			fmt.Sprintf("job %s keeps its artifacts only when it passes (when: %s): the receipt of a failing check, the one that says why, is lost", j.id, orDefault(w, "on_success, the default")),
			fmt.Sprintf("set when: always under the artifacts: of job %s", j.id)))
	} else {
		c.note("receipt: %s, kept as an artifact of job %s whether the check passes or fails", receipt, j.id)
	}
	if c.flags.Format == preflight.FormatJUnit && c.flags.Output != "" {
		report := c.cwdPath(c.flags.Output)
		var junit []string
		for _, p := range a.junit {
			junit = append(junit, p.value)
		}
		if !uploadCovers(junit, report) {
			c.add(finding("gate", file.path, a.line,
				fmt.Sprintf("the JUnit report %s of job %s is not among its artifacts: reports: junit:, so the merge request does not show it", report, j.id),
				fmt.Sprintf("add reports: junit: %s under the artifacts: of job %s", report, j.id)))
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The gate must run on pull requests (so a change that breaks a server
// does not merge) and on a schedule (a credential expires between pushes),
// or the workflow says why not, in a comment on its on: key (GitLab: on
// the job's key):
//
//	on: # mcpwatch-doctor: no-schedule because the daemon watches these servers
//
// The reason is required; it is shown in doctor's report.

// waiverPattern reads a waiver comment.
var waiverPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`mcpwatch-doctor:\s*no-(schedule|pull-request)\b[\s:,-]*(.*)`)
})

// waivers returns the waivers in the comments of n and everything under it:
// "schedule" or "pull-request" -> the reason given ("" for none).
func waivers(nodes ...*yaml.Node) map[string]string {
	out := map[string]string{}
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > 50 {
			return
		}
		for _, text := range []string{n.HeadComment, n.LineComment, n.FootComment} {
			for _, line := range strings.Split(text, "\n") {
				if m := waiverPattern().FindStringSubmatch(line); m != nil {
					out[m[1]] = strings.TrimSpace(m[2])
				}
			}
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	for _, n := range nodes {
		walk(n, 0)
	}
	return out
}

// waived reports whether what ("schedule", "pull-request") is waived; a
// waiver without a reason is a finding of its own.
func (c *candidate) waived(w map[string]string, what string, line int) bool {
	reason, ok := w[what]
	switch {
	case !ok:
		return false
	case reason == "":
		c.add(finding("triggers", c.step.job.file.path, line,
			fmt.Sprintf("the comment mcpwatch-doctor: no-%s gives no reason", what),
			fmt.Sprintf("say why after it: # mcpwatch-doctor: no-%s because ...", what)))
		return true
	}
	c.note("triggers: no %s, because the workflow says: %s", strings.ReplaceAll(what, "-", " "), reason)
	return true
}

const (
	fixSchedule    = `add a schedule under on: (schedule: - cron: "17 5 * * *", every morning), or say why there is none with a comment "# mcpwatch-doctor: no-schedule because ..." on the on: key`
	fixPullRequest = `add pull_request: under on:, or say why not with a comment "# mcpwatch-doctor: no-pull-request because ..." on the on: key`
)

// judgeTriggers: the gate runs on pull requests and on a schedule.
func (d *doctor) judgeTriggers(c *candidate) {
	f := c.step.job.file
	if f.system == systemGitLab {
		d.gitlabTriggers(c)
		return
	}
	line := 1
	if f.onKey != nil {
		line = f.onKey.Line
	}
	events := map[string]*yaml.Node{}
	switch on := f.on; {
	case on == nil:
	case on.Kind == yaml.MappingNode:
		for _, p := range pairs(on) {
			events[p[0].Value] = p[1]
		}
	default:
		for _, n := range items(on) {
			events[n.Value] = nil
		}
	}
	w := waivers(f.onKey, f.on)
	var names []string
	for e := range events {
		names = append(names, e)
	}
	slices.Sort(names)

	pr, hasPR := events["pull_request"]
	switch {
	case hasPR:
		d.judgePullRequest(c, pr, line)
	case c.waived(w, "pull-request", line):
	default:
		problem := fmt.Sprintf("the workflow runs on %s, not on pull requests: a change that breaks a server merges unchecked", orDefault(strings.Join(names, ", "), "no event"))
		if _, ok := events["pull_request_target"]; ok {
			problem += " (pull_request_target runs the base branch's workflow on the base branch's files, not the pull request's)"
		}
		c.add(finding("triggers", f.path, line, problem, fixPullRequest))
	}

	var crons []string
	for _, item := range items(events["schedule"]) {
		if cron := scalarOf(item, "cron"); cron.value != "" {
			crons = append(crons, cron.value)
		}
	}
	switch {
	case len(crons) > 0:
		c.note("triggers: %s; schedule %s", strings.Join(names, ", "), strings.Join(crons, "; "))
	case c.waived(w, "schedule", line):
	default:
		c.add(finding("triggers", f.path, line,
			fmt.Sprintf("the workflow runs on %s, with no schedule: a credential that expires between pushes is noticed by the next pull request, not on the day it expires", orDefault(strings.Join(names, ", "), "no event")),
			fixSchedule))
	}
}

// judgePullRequest: the pull_request trigger fires when a pull request is
// opened and updated, and for changes to the configuration and the lock.
func (d *doctor) judgePullRequest(c *candidate, pr *yaml.Node, line int) {
	f := c.step.job.file
	if types := items(value(pr, "types")); len(types) > 0 {
		var have []string
		for _, t := range types {
			have = append(have, t.Value)
		}
		for _, want := range []string{"opened", "synchronize"} {
			if !slices.Contains(have, want) {
				c.add(finding("triggers", f.path, types[0].Line,
					fmt.Sprintf("the workflow runs on pull requests only when they are %s, not %s: a pull request is not checked as it changes", strings.Join(have, ", "), want),
					fmt.Sprintf("add %s to pull_request: types: (or remove types:, whose default is opened, synchronize, reopened)", want)))
			}
		}
	}
	if c.source.cfg == nil {
		return
	}
	files := c.gateFiles(d)
	for _, key := range []string{"paths", "paths-ignore"} {
		var patterns []string
		n := value(pr, key)
		for _, p := range items(n) {
			patterns = append(patterns, p.Value)
		}
		if len(patterns) == 0 {
			continue
		}
		var missed []string
		for _, file := range files {
			if filterMatches(patterns, file) == (key == "paths-ignore") {
				missed = append(missed, file)
			}
		}
		if len(missed) > 0 {
			c.add(finding("triggers", f.path, n.Line,
				fmt.Sprintf("the pull_request %s: filter leaves out %s: a pull request that changes only %s does not run the check", key, andList(missed), plural(len(missed), "it", "those")),
				fmt.Sprintf("make pull_request: %s: take %s in (or remove the filter)", key, andList(missed))))
		}
	}
}

// Pipeline sources that matter to a GitLab gate: a merge request's
// pipeline, a push to a branch (a merge request's branch included), and a
// scheduled pipeline.
const (
	sourceMergeRequest = "merge_request_event"
	sourcePush         = "push"
	sourceSchedule     = "schedule"
)

// gitlabTriggers: the job runs in merge request (or branch) pipelines and
// in scheduled ones. The schedule itself lives in GitLab's settings, out
// of doctor's sight.
func (d *doctor) gitlabTriggers(c *candidate) {
	j := c.step.job
	w := waivers(j.keyNode)
	mr := gitlabRuns(j, sourceMergeRequest) || gitlabRuns(j, sourcePush)
	switch {
	case mr:
	case c.waived(w, "pull-request", j.line):
	default:
		c.add(finding("triggers", j.file.path, j.line,
			fmt.Sprintf("job %s runs neither in merge request pipelines nor in branch pipelines: a change that breaks a server merges unchecked", j.id),
			`let its rules: run it for merge requests (- if: $CI_PIPELINE_SOURCE == "merge_request_event"), or say why not with a comment "# mcpwatch-doctor: no-pull-request because ..." on the job's key`))
	}
	switch {
	case gitlabRuns(j, sourceSchedule):
		c.note("triggers: job %s runs in merge request or branch pipelines and in scheduled ones (the schedule itself is set in GitLab under Build > Pipeline schedules, which doctor cannot see)", j.id)
	case c.waived(w, "schedule", j.line):
	default:
		c.add(finding("triggers", j.file.path, j.line,
			fmt.Sprintf("job %s does not run in scheduled pipelines: a credential that expires between pushes is noticed by the next merge request, not on the day it expires", j.id),
			`let its rules: run it for schedules (- if: $CI_PIPELINE_SOURCE == "schedule") and add a pipeline schedule, or say why not with a comment "# mcpwatch-doctor: no-schedule because ..." on the job's key`))
	}
}

// gitlabRuns reports whether job j runs in a pipeline of source, by its
// rules: (the first rule that matches decides; when: never excludes), else
// only: and except:, else GitLab's default (branch pipelines and
// schedules, no merge request pipelines).
func gitlabRuns(j *job, source string) bool {
	if j.rules != nil {
		for _, r := range items(j.rules) {
			cond := scalarOf(r, "if")
			if cond.set() && !ruleMatches(cond.value, source) {
				continue
			}
			return scalarOf(r, "when").value != "never"
		}
		return false
	}
	refs := func(n *yaml.Node) []string {
		if n != nil && n.Kind == yaml.MappingNode {
			n = value(n, "refs")
		}
		var out []string
		for _, i := range items(n) {
			out = append(out, i.Value)
		}
		return out
	}
	matches := func(list []string) bool {
		for _, ref := range list {
			switch ref {
			case "merge_requests":
				if source == sourceMergeRequest {
					return true
				}
			case "schedules":
				if source == sourceSchedule {
					return true
				}
			case "pushes":
				if source == sourcePush {
					return true
				}
			case "branches":
				if source != sourceMergeRequest {
					return true
				}
			case "tags", "api", "web", "triggers", "pipelines", "external", "external_pull_requests", "chat":
			default: // a branch name or pattern
				if source != sourceMergeRequest {
					return true
				}
			}
		}
		return false
	}
	if only := refs(j.only); len(only) > 0 {
		return matches(only) && !matches(refs(j.except))
	}
	if except := refs(j.except); len(except) > 0 && matches(except) {
		return false
	}
	return source != sourceMergeRequest
}

var sourceComparison = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$CI_PIPELINE_SOURCE\s*(==|!=)\s*["']([a-z_]+)["']`) })

// ruleMatches is a reading of a rules: if: expression for one pipeline
// source: comparisons of $CI_PIPELINE_SOURCE, and the variables only
// merge request or branch pipelines have. What it cannot read is taken to
// match.
func ruleMatches(expr, source string) bool {
	if m := sourceComparison().FindAllStringSubmatch(expr, -1); len(m) > 0 {
		all := strings.Contains(expr, "&&") && !strings.Contains(expr, "||")
		result := all
		for _, cmp := range m {
			ok := (cmp[1] == "==") == (cmp[2] == source)
			if all {
				result = result && ok
			} else {
				result = result || ok
			}
		}
		return result
	}
	switch {
	case strings.Contains(expr, "$CI_MERGE_REQUEST_"):
		return source == sourceMergeRequest
	case strings.Contains(expr, "$CI_COMMIT_BRANCH") && strings.Contains(expr, "$CI_DEFAULT_BRANCH"):
		return source == sourceSchedule // the default branch only: no merge request's branch
	case strings.Contains(expr, "$CI_COMMIT_BRANCH"):
		return source != sourceMergeRequest
	case strings.Contains(expr, "$CI_COMMIT_TAG"):
		return false
	}
	return true
}

// gateFiles are the files of the repository whose change changes what the
// check checks: the configuration, the client configs it imports, the
// contracts files and the lock, relative to the repository.
func (c *candidate) gateFiles(d *doctor) []string {
	files := []string{d.rel(c.source.path)}
	add := func(p string) {
		if p != "" && !slices.Contains(files, d.rel(p)) {
			files = append(files, d.rel(p))
		}
	}
	for _, s := range c.probed() {
		add(s.Source)
		add(s.ContractsFile)
	}
	add(c.lockPath)
	return files
}

// andList joins "a", "b" and "c" as "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

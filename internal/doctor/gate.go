package doctor

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
)

// candidate is one command of a CI step that runs mcpwatch check: a gate,
// if it holds.
type candidate struct {
	step  *step
	cmds  []command // the commands of its script
	index int       // its own, in cmds
	final int       // where the script's last and-or list starts, in cmds (finalList)
	inv   invocation
	line  int // the file's line of the command
	sc    *scope
	state scriptState
	text  string // the command as written, for messages

	flags    CheckFlags
	flagsErr error
	dynamic  []string // flag values only the run knows (${{ matrix.x }}, $(...))

	source   configSource // the configuration it checks
	lockPath string       // its lock, absolute; "" when there is no configuration
	findings []Finding
	// notes say what holds, for Report.Verified.
	notes []string
}

func (c *candidate) add(f Finding) { c.findings = append(c.findings, f) }

func (c *candidate) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

func (c *candidate) where() string {
	return fmt.Sprintf("%s:%d", c.step.job.file.path, c.line)
}

// stepName names the step for messages: GitHub's step, GitLab's job.
func (c *candidate) stepName() string {
	if c.step.job.file.system == systemGitLab {
		return fmt.Sprintf("the %s of job %s", c.step.name, c.step.job.id)
	}
	return fmt.Sprintf("the step %q of job %s", c.step.name, c.step.job.id)
}

// maxCandidates bounds how many commands that run mcpwatch check doctor
// judges: a repository's gate is one command, and a few more are the most
// any seen; a workflow of thousands (one && list of 50,000 in a pull
// request) is a finding of its own, not minutes of judging.
const maxCandidates = 1000

// gathered are the commands of the CI steps that run mcpwatch check, the
// first maxCandidates of them, and how many more there are.
type gathered struct {
	cands []*candidate
	more  int
	// file and line are where the first command beyond the bound is.
	file string
	line int
}

// candidates finds the commands of every CI step that run mcpwatch check.
func (d *doctor) candidates() gathered {
	var g gathered
	for _, f := range d.files {
		for _, j := range f.jobs {
			var written []envVar
			for _, s := range j.steps {
				d.stepCandidates(s, written, &g)
				if f.system == systemGitHub {
					written = append(written, githubEnvWrites(s)...)
				}
			}
		}
	}
	return g
}

func (d *doctor) stepCandidates(s *step, written []envVar, g *gathered) {
	script, lines := s.script, s.lines
	if image, ok := strings.CutPrefix(s.uses.value, "docker://"); ok && isMcpwatchImage(image) {
		// a container action: its args are mcpwatch's arguments
		args := s.with["args"]
		script, lines = "mcpwatch "+args.value, []int{max(args.line, s.uses.line)}
	}
	if script == "" {
		return
	}
	probe := *s
	probe.script, probe.lines = script, lines
	sc := newScope(s, written)
	st := d.initialState(&probe, sc)
	cmds := parseScript(script)
	final := finalList(cmds)
	for i := range cmds {
		c := &cmds[i]
		line := probe.fileLine(c.line)
		if inv, ok := findInvocation(c, sc); ok {
			if len(inv.args) > 0 {
				if sub, _ := inv.args[0].resolve(sc); sub == "check" {
					if len(g.cands) == maxCandidates {
						if g.more == 0 {
							g.file, g.line = s.job.file.path, line
						}
						g.more++
						continue
					}
					csc := sc.clone()
					for _, a := range inv.env {
						csc.assign(a, true, line)
					}
					g.cands = append(g.cands, &candidate{step: s, cmds: cmds, index: i, final: final, inv: inv, line: line,
						sc: csc, state: st, text: commandText(c)})
				}
			}
			continue
		}
		st.apply(c, sc, line)
	}
}

// initialState is where a step's script starts and how its shell treats a
// failing command.
func (d *doctor) initialState(s *step, sc *scope) scriptState {
	if s.job.file.system == systemGitLab {
		// GitLab runs a job's script with set -eo pipefail, in the
		// project's directory.
		return scriptState{cwd: ".", errexit: true, pipefail: true}
	}
	st := scriptState{cwd: "."}
	st.errexit, st.pipefail = shellStops(githubStepShell(s))
	for _, wd := range []scalar{s.workdir, s.job.defaultsRun.workdir, s.job.file.defaultsRun.workdir} {
		if wd.value == "" {
			continue
		}
		dir, ok := resolveString(wd.value, sc)
		if !ok || path.IsAbs(dir) {
			st.cwd = ""
		} else {
			st.cwd = path.Clean(dir)
		}
		break
	}
	return st
}

// resolveString resolves a value the workflow writes outside a script
// (working-directory:, path:) as a shell word.
func resolveString(s string, r resolver) (string, bool) {
	lx := lexer{s: strings.TrimSpace(s)}
	if lx.s == "" {
		return "", true
	}
	w := lx.word()
	if lx.i < len(lx.s) {
		// more than one word (a path with a space): keep it as written
		w = word{pieces: []piece{{kind: pieceLit, text: lx.s}}}
	}
	return w.resolve(r)
}

// commandText is a command as written: its assignments and words.
func commandText(c *command) string {
	var parts []string
	for _, a := range c.assigns {
		parts = append(parts, a.name+"="+a.value.raw())
	}
	for _, w := range c.words {
		parts = append(parts, w.raw())
	}
	return strings.Join(parts, " ")
}

// judgeGate finds the CI gate and judges it: the best candidate's findings
// are the report's. It returns the candidate judged, nil when there is
// none.
func (d *doctor) judgeGate() *candidate {
	g := d.candidates()
	cands := g.cands
	if g.more > 0 {
		d.add(finding("gate", g.file, g.line,
			fmt.Sprintf("%d commands of the CI run mcpwatch check; doctor judged the first %d and left the other %d unread (a gate is one command: so many are a mistake, or a workflow written to keep doctor busy)", len(cands)+g.more, len(cands), g.more),
			"run mcpwatch check once, in the one step that gates, and remove the other commands"))
	}
	if len(cands) == 0 {
		file, line := ".github/workflows/mcp-preflight.yml", 1
		if len(d.files) > 0 {
			file = d.files[0].path
		}
		d.add(finding("gate", file, line,
			fmt.Sprintf("no CI step runs mcpwatch check (read: %s): nothing stops a change that breaks a server, and nothing notices a credential that expires", d.ciNames()),
			"add a workflow that runs it: copy examples/github-actions/mcp-preflight.yml of mcpwatch to .github/workflows/ and adapt its env: to your servers' secrets"))
		return nil
	}
	for _, c := range cands {
		d.parseFlags(c)
	}
	// The first of the fewest findings is judged the gate; the others'
	// findings are dropped as soon as one does better, so that a step of
	// many commands keeps the findings of one.
	others := flagHolders(cands)
	var best *candidate
	for _, c := range cands {
		d.judge(c, others)
		switch {
		case best == nil:
			best = c
		case len(c.findings) < len(best.findings):
			best.findings, best.notes = nil, nil
			best = c
		default:
			c.findings, c.notes = nil, nil
		}
	}
	for _, f := range best.findings {
		d.add(f)
	}
	d.report.Gate = &Gate{File: safe(best.step.job.file.path), Line: best.line, Job: safe(best.step.job.id),
		Step: safe(best.step.name), Command: safe(best.text)}
	if best.source.cfg != nil {
		d.report.Gate.Config = safe(d.rel(best.source.path))
		d.report.Gate.Lock = safe(d.rel(best.lockPath))
	}
	for _, n := range best.notes {
		d.verified("%s", n)
	}
	return best
}

// parseFlags reads the candidate's command line with mcpwatch check's flags.
func (d *doctor) parseFlags(c *candidate) {
	var args []string
	for _, w := range c.inv.args[1:] {
		text, known := w.resolve(c.sc)
		if !known {
			c.dynamic = append(c.dynamic, text)
		}
		args = append(args, text)
	}
	c.flags, c.flagsErr = d.opts.ParseCheck(args)
}

// judge judges one candidate: its findings and notes.
func (d *doctor) judge(c *candidate, others holders) {
	file := c.step.job.file
	if c.flagsErr != nil {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("%s runs %q, which mcpwatch check refuses (%v): the step fails on a usage error (exit 2) before it checks anything", c.stepName(), c.text, c.flagsErr),
			"fix the command line; 'mcpwatch check --help' lists its flags"))
		return
	}
	c.note("gate: %s, %s runs: %s", c.where(), c.stepName(), c.text)
	d.judgeFlags(c, others)
	d.judgeFailure(c)
	d.judgeConfig(c)
	d.judgeReceipt(c)
	d.judgeTriggers(c)
	d.judgeCredentials(c)
	d.judgeStartup(c)
	d.judgeTimeout(c)
}

// flagReq is a flag the gate's command must have itself.
type flagReq struct {
	ok      func(*candidate) bool
	flag    string
	problem string
}

// flagReqs are the flags a gate needs on a CI system: strict, its CI
// output and a receipt.
func flagReqs(system string) []flagReq {
	reqs := []flagReq{{
		ok:      func(o *candidate) bool { return o.flags.Strict },
		flag:    "--strict",
		problem: "has no --strict (or --fail-on-warn): extra tools, changed schemas, servers not in the lock, retried calls and tools without a contract pass as warnings",
	}}
	if system == systemGitHub {
		reqs = append(reqs, flagReq{
			ok:      func(o *candidate) bool { return o.flags.Format == preflight.FormatGitHub },
			flag:    "--format github",
			problem: "has no --format github: no annotation on the pull request and no summary on the run's page, only lines in the job log",
		})
	} else {
		reqs = append(reqs, flagReq{
			ok:      func(o *candidate) bool { return o.flags.Format == preflight.FormatJUnit && o.flags.Output != "" },
			flag:    "--format junit --output mcp-preflight.xml",
			problem: "writes no JUnit report (--format junit --output FILE): the merge request shows nothing of the check",
		})
	}
	return append(reqs, flagReq{
		ok:      func(o *candidate) bool { return o.flags.Receipt != "" },
		flag:    "--receipt mcp-receipt.json",
		problem: "has no --receipt FILE: no record of what each server answered is kept",
	})
}

// holders are, for each file and flag, the first two commands of the file
// (in reading order) whose own command line has the flag: for a command
// without it, the one to name is the first that is not itself. Found in
// one pass, so that a file of many commands costs no pass per command.
type holders map[holderKey][2]*candidate

type holderKey struct {
	file *ciFile
	flag string
}

func flagHolders(all []*candidate) holders {
	h := holders{}
	for _, o := range all {
		if o.flagsErr != nil {
			continue
		}
		for _, r := range flagReqs(o.step.job.file.system) {
			if !r.ok(o) {
				continue
			}
			k := holderKey{o.step.job.file, r.flag}
			pair := h[k]
			if pair[0] == nil {
				pair[0] = o
			} else if pair[1] == nil {
				pair[1] = o
			}
			h[k] = pair
		}
	}
	return h
}

// other is the first command of c's file, other than c, that has flag.
func (h holders) other(c *candidate, flag string) *candidate {
	pair := h[holderKey{c.step.job.file, flag}]
	if pair[0] != c {
		return pair[0]
	}
	return pair[1]
}

// judgeFlags: strict, CI output and a receipt, on this very command.
func (d *doctor) judgeFlags(c *candidate, others holders) {
	file := c.step.job.file
	var missing []string
	elsewhere := func(flag string) string {
		if o := others.other(c, flag); o != nil {
			return fmt.Sprintf(" (the command at %s has it, but a flag counts only on the command that checks)", o.where())
		}
		return ""
	}
	var failing []flagReq
	for _, r := range flagReqs(file.system) {
		if !r.ok(c) {
			missing = append(missing, r.flag)
			failing = append(failing, r)
		}
	}
	suggested := strings.Join(append([]string{c.text}, missing...), " ")
	for _, r := range failing {
		fix := fmt.Sprintf("add %s to that same command: %s", r.flag, suggested)
		if r.flag == "--receipt mcp-receipt.json" {
			fix += "; then upload the file in a later step of the job"
		}
		c.add(finding("gate", file.path, c.line, fmt.Sprintf("the mcpwatch check of %s %s%s", c.stepName(), r.problem, elsewhere(r.flag)), fix))
	}
	if len(failing) == 0 {
		c.note("flags: strict, %s output and a receipt (%s), on that one command", map[string]string{systemGitHub: "GitHub", systemGitLab: "JUnit"}[file.system], c.flags.Receipt)
	}
	if len(c.flags.Servers) > 0 {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("the mcpwatch check of %s checks only %s (--server): the other servers are not gated", c.stepName(), strings.Join(c.flags.Servers, ", ")),
			"remove --server from the command, so that every configured server is checked"))
	}
	if len(c.flags.Skip) > 0 {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("the mcpwatch check of %s leaves out %s (--skip): nothing gates them", c.stepName(), strings.Join(c.flags.Skip, ", ")),
			"remove --skip once the server works again (or, in an mcpwatch.yml, list it under ignore:, where the daemon sees it too and doctor does not count it)"))
	}
}

// judgeFailure: a failing check fails the step, and the step the job.
func (d *doctor) judgeFailure(c *candidate) {
	file, s := c.step.job.file, c.step
	if why := swallowed(c.cmds, c.index, c.final, c.state); why != "" {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("%s does not fail when mcpwatch check fails: %s", c.stepName(), why),
			"run mcpwatch check as a command of its own, not negated, not in a condition and with nothing after it that hides its exit status (no || true); the shell's -e (set -e) ends the step at the failing command"))
	}
	if s.afterScript {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("job %s runs mcpwatch check in after_script:, whose exit status GitLab ignores", s.job.id),
			"move the command to the job's script:"))
	}
	for _, mf := range []struct {
		v    scalar
		what string
	}{{s.mayFail, fmt.Sprintf("the step %q", s.name)}, {s.job.mayFail, "job " + s.job.id}} {
		if mf.v.set() && mf.v.value != "false" {
			key := "continue-on-error"
			if file.system == systemGitLab {
				key = "allow_failure"
			}
			c.add(finding("gate", file.path, mf.v.line,
				fmt.Sprintf("%s: %s on %s: a failing check does not fail the run, so a pull request merges past it", key, mf.v.value, mf.what),
				fmt.Sprintf("remove %s from %s", key, mf.what)))
		}
	}
	for _, cond := range []struct {
		v    scalar
		what string
	}{{s.ifCond, c.stepName()}, {s.job.ifCond, "job " + s.job.id}} {
		if cond.v.set() && mentionsEvent(cond.v.value) {
			c.add(finding("gate", file.path, cond.v.line,
				fmt.Sprintf("%s runs only if %s: whether it runs depends on the event, so it may not gate pull requests or the schedule", cond.what, cond.v.value),
				"remove that if:, or its condition on the event, so the check runs on every trigger of the workflow"))
		}
	}
}

// mentionsEvent: a condition that depends on what triggered the run.
func mentionsEvent(cond string) bool {
	for _, s := range []string{"event_name", "github.event.", "schedule", "pull_request", "CI_PIPELINE_SOURCE"} {
		if strings.Contains(cond, s) {
			return true
		}
	}
	return false
}

// finalList is where the last and-or list of a script starts: the index
// of the first of the commands that && and || (and pipes) join to the
// script's last command. Read once a script, so that judging each of the
// commands of a long list costs nothing more.
func finalList(cmds []command) int {
	j := len(cmds) - 1
	for j > 0 && joined(cmds[j-1].op) {
		j--
	}
	return max(j, 0)
}

// joined: an operator that makes the next command part of the same and-or
// list (or pipeline).
func joined(op string) bool { return op == "&&" || op == "||" || op == "|" || op == "|&" }

// swallowed says why the failure of cmds[i] does not fail its script, or
// "" when it does; final is finalList(cmds).
func swallowed(cmds []command, i, final int, st scriptState) string {
	c := cmds[i]
	lastInScript := i >= final // its and-or list runs to the end of the script
	switch {
	case c.negated:
		return "it is negated with !"
	case c.condition:
		return "it is the condition of an if, while or until, whose failure the shell takes as an answer"
	case c.op == "||":
		if i+1 < len(cmds) && exitsNonZero(cmds[i+1]) {
			return ""
		}
		return "|| after it runs another command when it fails, and the step goes on"
	case c.op == "&":
		return "it runs in the background (&)"
	case (c.op == "|" || c.op == "|&") && !st.pipefail:
		return "its output is piped into another command, and without pipefail a pipeline's status is its last command's"
	case c.prev == "||":
		return "it runs only when the command before || fails"
	case c.op == "&&" && !lastInScript:
		return "&& after it makes it part of a list, which the shell's -e does not stop on, and more commands follow"
	case !st.errexit && !lastInScript:
		return "the shell runs on after a failing command (no -e, or set +e), and the step's status is its last command's"
	}
	return ""
}

// exitsNonZero: "exit 78", "exit 1", "exit $?", "false": a command that
// keeps the failure a failure.
func exitsNonZero(c command) bool {
	if len(c.words) == 0 {
		return false
	}
	name, _ := c.words[0].literal()
	if name == "false" {
		return true
	}
	if name != "exit" || len(c.words) < 2 {
		return false
	}
	arg := c.words[1].raw()
	return arg != "0" && arg != ""
}

// judgeConfig: the command checks the intended configuration.
func (d *doctor) judgeConfig(c *candidate) {
	file := c.step.job.file
	if slices.Contains(c.dynamic, c.flags.ConfigFile) && c.flags.ConfigFile != "" {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("the mcpwatch check of %s reads --config.file %s, which only the run knows", c.stepName(), c.flags.ConfigFile),
			"name the configuration file as it is in the repository"))
	}
	cwd := c.state.cwd
	if cwd == "" {
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("%s changes to a directory doctor cannot follow before it runs mcpwatch check, so which configuration it reads cannot be told", c.stepName()),
			"run it from the repository's top, or from a working-directory: written as a path in the repository, with --config.file naming the file"))
		cwd = "."
	}
	dir := filepath.Join(d.opts.Dir, filepath.FromSlash(cwd))
	c.source = discoverConfig(c.flags.ConfigFile, dir, c.sc.getenv)
	if c.source.cfg != nil {
		c.lockPath = c.source.cfg.Lock
		if c.flags.LockFile != "" {
			c.lockPath = filepath.Join(dir, filepath.FromSlash(c.flags.LockFile))
			if filepath.IsAbs(c.flags.LockFile) {
				c.lockPath = c.flags.LockFile
			}
		}
	}
	in := d.intended
	switch {
	case in.err == nil && c.source.path != in.path:
		c.add(finding("gate", file.path, c.line,
			fmt.Sprintf("the mcpwatch check of %s checks %s, not %s, the configuration mcpwatch check reads at the repository's top", c.stepName(), d.rel(c.source.path), d.rel(in.path)),
			fmt.Sprintf("pass --config.file %s on that command (or, if %s is the one meant, run mcpwatch doctor --config.file %s)", d.rel(in.path), d.rel(c.source.path), d.rel(c.source.path))))
	case c.source.cfg != nil:
		n := len(c.source.cfg.Servers)
		c.note("configuration: %s (%d %s), lock %s", d.rel(c.source.path), n, plural(n, "server", "servers"), d.rel(c.lockPath))
	}
}

// cwdPath returns a path a command names, relative to the workspace, or
// as the run knows it when it cannot be told.
func (c *candidate) cwdPath(p string) string {
	if path.IsAbs(p) || c.state.cwd == "" || strings.HasPrefix(p, "${{") {
		return p
	}
	return cleanPath(path.Join(c.state.cwd, p))
}

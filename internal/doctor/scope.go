package doctor

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// scope is the environment of a command of a CI step: the variables the
// file, the job and the step set (later ones win), those the script
// exported or assigned before the command, and those earlier steps of the
// job wrote to $GITHUB_ENV.
type scope struct {
	system  string
	vars    map[string]envVar // exported: what mcpwatch sees
	shell   map[string]string // shell variables of the script, resolved; "" with known false is unknown
	unknown map[string]bool   // shell variables whose value could not be resolved
}

// newScope is the environment a step starts with; written are the
// variables earlier steps of its job wrote to $GITHUB_ENV.
func newScope(s *step, written []envVar) *scope {
	sc := &scope{system: s.job.file.system, vars: map[string]envVar{}, shell: map[string]string{},
		unknown: map[string]bool{}}
	for _, layer := range [][]envVar{s.job.file.env, s.job.env, s.job.secretVars, written, s.env} {
		for _, v := range layer {
			sc.vars[v.name] = v
		}
	}
	return sc
}

// exprPattern finds the ${{ }} expressions of a value.
var exprPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{\{(.*?)\}\}`) })

// literalValue returns an env value when the workflow writes it as a
// literal, or as ${{ env.NAME }} of such a value.
func (sc *scope) literalValue(v envVar, depth int) (string, bool) {
	if !strings.Contains(v.value, "${{") {
		if sc.system == systemGitLab && strings.Contains(v.value, "$") {
			return "", false // GitLab expands $OTHER in variables
		}
		return v.value, true
	}
	if depth > 5 {
		return "", false
	}
	m := exprPattern().FindAllStringSubmatchIndex(v.value, -1)
	var b strings.Builder
	last := 0
	for _, loc := range m {
		b.WriteString(v.value[last:loc[0]])
		val, ok := sc.expressionAt(normalizeExpr(v.value[loc[2]:loc[3]]), depth+1)
		if !ok {
			return "", false
		}
		b.WriteString(val)
		last = loc[1]
	}
	b.WriteString(v.value[last:])
	return b.String(), true
}

// variable resolves $NAME in the script.
func (sc *scope) variable(name string) (string, bool) {
	if v, ok := sc.shell[name]; ok {
		return v, !sc.unknown[name]
	}
	if sc.unknown[name] {
		return "", false
	}
	if v, ok := sc.vars[name]; ok {
		return sc.literalValue(v, 0)
	}
	if name == "GITHUB_WORKSPACE" || name == "CI_PROJECT_DIR" {
		return ".", true
	}
	return "", false
}

// expression resolves a ${{ }} expression the workflow can say before the
// run: env.NAME of a literal, github.workspace.
func (sc *scope) expression(expr string) (string, bool) { return sc.expressionAt(expr, 0) }

func (sc *scope) expressionAt(expr string, depth int) (string, bool) {
	switch {
	case expr == "github.workspace":
		return ".", true
	case strings.HasPrefix(expr, "env."):
		if v, ok := sc.vars[strings.TrimPrefix(expr, "env.")]; ok {
			return sc.literalValue(v, depth)
		}
	}
	return "", false
}

// getenv reads a variable as mcpwatch would see it, "" when unset or unknown.
func (sc *scope) getenv(name string) string {
	if v, ok := sc.vars[name]; ok {
		s, _ := sc.literalValue(v, 0)
		return s
	}
	return ""
}

// assign records a shell assignment NAME=value of the script; exported
// (export NAME=value, or a name already in the environment) it reaches
// mcpwatch too.
func (sc *scope) assign(a assignment, exported bool, line int) {
	val, ok := a.value.resolve(sc)
	sc.shell[a.name] = val
	sc.unknown[a.name] = !ok
	if _, inEnv := sc.vars[a.name]; exported || inEnv {
		sc.vars[a.name] = envVar{name: a.name, value: a.value.raw(), line: line, scope: "the script"}
	}
}

// clone copies the scope, for the environment of one command.
func (sc *scope) clone() *scope {
	c := *sc
	c.vars = make(map[string]envVar, len(sc.vars))
	for k, v := range sc.vars {
		c.vars[k] = v
	}
	return &c
}

// scriptState is what the shell knows while it runs a script: where it is
// and how it treats a failing command.
type scriptState struct {
	cwd               string // relative to the workspace; "" when unknown
	errexit, pipefail bool
}

// apply updates the state and the scope with what a command that is not
// mcpwatch does: cd, set -e / +e / -o pipefail, export, assignments.
func (st *scriptState) apply(c *command, sc *scope, line int) {
	if len(c.words) == 0 {
		for _, a := range c.assigns {
			sc.assign(a, false, line)
		}
		return
	}
	name, _ := c.words[0].resolve(sc)
	args := c.words[1:]
	switch name {
	case "cd", "pushd":
		if len(args) == 0 {
			st.cwd = ""
			return
		}
		dir, ok := args[len(args)-1].resolve(sc)
		switch {
		case !ok || st.cwd == "" || path.IsAbs(dir) || strings.HasPrefix(dir, "~"):
			st.cwd = ""
		default:
			st.cwd = path.Clean(path.Join(st.cwd, dir))
		}
	case "export", "declare", "typeset", "readonly":
		for _, w := range args {
			if n, v, ok := splitAssignment(w); ok {
				sc.assign(assignment{name: n, value: v}, name != "readonly", line)
			} else if lit, ok := w.literal(); ok && isShellName(lit) && name == "export" {
				if v, ok := sc.shell[lit]; ok {
					sc.vars[lit] = envVar{name: lit, value: v, line: line, scope: "the script"}
				}
			}
		}
	case "set":
		for i := 0; i < len(args); i++ {
			a, _ := args[i].literal()
			if len(a) < 2 || (a[0] != '-' && a[0] != '+') || strings.HasPrefix(a, "--") {
				continue
			}
			on := a[0] == '-'
			if strings.Contains(a[1:], "e") {
				st.errexit = on
			}
			if strings.Contains(a[1:], "o") && i+1 < len(args) {
				if next, _ := args[i+1].literal(); next == "pipefail" {
					st.pipefail = on
					i++
				} else if next == "errexit" {
					st.errexit = on
					i++
				}
			}
		}
	}
}

// githubEnvWrites returns the variables a step's script writes to
// $GITHUB_ENV (echo "NAME=value" >> "$GITHUB_ENV", or NAME<<EOF), which
// reach every later step of the job.
func githubEnvWrites(s *step) []envVar {
	var out []envVar
	for _, c := range parseScript(s.script) {
		writes := false
		for _, r := range c.redirs {
			if strings.Contains(r.target.raw(), "GITHUB_ENV") {
				writes = true
			}
		}
		if !writes {
			continue
		}
		for _, w := range c.words[min(1, len(c.words)):] {
			text := w.raw()
			for _, sep := range []string{"=", "<<"} {
				if i := strings.Index(text, sep); i > 0 && isShellName(text[:i]) {
					out = append(out, envVar{name: text[:i], value: text[i+len(sep):], line: s.fileLine(c.line),
						scope: "$GITHUB_ENV, written by the step " + quote(s.name)})
					break
				}
			}
		}
	}
	return out
}

func quote(s string) string { return `"` + s + `"` }

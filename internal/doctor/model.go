package doctor

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// What doctor reads of a CI configuration, GitHub Actions' or GitLab CI's:
// files, their jobs, and the steps of each job, every value with the line
// it is written on, so that a finding can name it.

// ciFile is one workflow (GitHub Actions) or .gitlab-ci.yml.
type ciFile struct {
	path   string // relative to the repository, slash-separated
	system string // systemGitHub or systemGitLab
	jobs   []*job
	env    []envVar // the workflow's env (GitHub), the global variables (GitLab)
	// on is the workflow's on: key and value (GitHub); nil when absent.
	onKey, on *yaml.Node
	// defaultsRun is the workflow's defaults.run (GitHub).
	defaultsRun runDefaults
}

const (
	systemGitHub = "github"
	systemGitLab = "gitlab"
)

// runDefaults are defaults.run: the shell and the working directory of
// run steps.
type runDefaults struct {
	shell, workdir scalar
}

// job is one job of a file.
type job struct {
	file *ciFile
	id   string
	line int
	// keyNode is the job's key, whose comments may hold a waiver (GitLab).
	keyNode *yaml.Node
	env     []envVar // the job's env (GitHub) or variables (GitLab)
	steps   []*step
	// timeout is the job's timeout-minutes (GitHub) or timeout (GitLab)
	// as written; zero when not set.
	timeout     scalar
	ifCond      scalar // the job's if: (GitHub)
	mayFail     scalar // continue-on-error (GitHub), allow_failure (GitLab)
	defaultsRun runDefaults

	// GitLab only.
	artifacts  *artifacts
	rules      *yaml.Node // rules:
	only       *yaml.Node // only:
	except     *yaml.Node // except:
	secretVars []envVar   // the job's secrets: (Vault and the like), each a variable
}

// artifacts are a GitLab job's artifacts:.
type artifacts struct {
	line  int
	paths []scalar
	when  scalar // always, on_success (the default) or on_failure
	junit []scalar
}

// step is one step of a job: a GitHub Actions step, or a GitLab job's
// script (before_script and script together) or after_script.
type step struct {
	job   *job
	index int    // 0-based, in the job
	name  string // its name:, else id:, else what it runs or uses, for messages
	line  int

	script  string // run: (GitHub), the script lines (GitLab)
	lines   []int  // the file's line of each line of script
	shell   scalar
	workdir scalar
	env     []envVar
	uses    scalar
	with    map[string]scalar
	ifCond  scalar
	mayFail scalar // continue-on-error
	timeout scalar // timeout-minutes
	// afterScript: a GitLab after_script, whose exit status fails nothing.
	afterScript bool
}

// fileLine returns the file's line of the script's line n.
func (s *step) fileLine(n int) int {
	switch {
	case len(s.lines) == 0:
		return s.line
	case n < len(s.lines):
		return s.lines[n]
	}
	return s.lines[len(s.lines)-1]
}

// scalar is a value as written, and its line (0: not written).
type scalar struct {
	value string
	line  int
}

func (s scalar) set() bool { return s.line > 0 }

// envVar is one variable a file, a job or a step sets.
type envVar struct {
	name  string
	value string
	line  int
	// scope says where it is set, for messages: "the workflow's env",
	// "the job's env", "the step's env", "the job's variables", ...
	scope string
}

// The YAML helpers below read yaml.Node trees, following aliases.

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

// lookup returns the key and value nodes of key in a mapping.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], deref(m.Content[i+1])
		}
	}
	return nil, nil
}

func value(m *yaml.Node, key string) *yaml.Node {
	_, v := lookup(m, key)
	return v
}

// scalarOf returns the scalar under key; a mapping or a sequence is not one.
func scalarOf(m *yaml.Node, key string) scalar {
	v := value(m, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return scalar{}
	}
	return scalar{value: v.Value, line: v.Line}
}

// pairs returns the key and value nodes of a mapping, in order.
func pairs(m *yaml.Node) [][2]*yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, [2]*yaml.Node{m.Content[i], deref(m.Content[i+1])})
	}
	return out
}

// items returns a sequence's items; a scalar is a sequence of one.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, deref(c))
		}
		return out
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		return []*yaml.Node{n}
	}
	return nil
}

// envOf reads an env: (or variables:) mapping.
func envOf(m *yaml.Node, scope string) []envVar {
	var out []envVar
	for _, p := range pairs(m) {
		v := p[1]
		val := ""
		switch {
		case v == nil:
		case v.Kind == yaml.ScalarNode:
			if v.Tag != "!!null" {
				val = v.Value
			}
		case v.Kind == yaml.MappingNode: // GitLab: {value: ..., description: ...}
			val = scalarOf(v, "value").value
		}
		out = append(out, envVar{name: p[0].Value, value: val, line: p[0].Line, scope: scope})
	}
	return out
}

// scriptLines returns the text of a scalar and the file line of each of
// its lines: a literal block (|) keeps its lines; any other style is
// placed on its first line.
func scriptLines(n *yaml.Node) (string, []int) {
	text := n.Value
	count := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	lines := make([]int, count)
	for i := range lines {
		if n.Style&yaml.LiteralStyle != 0 {
			lines[i] = n.Line + 1 + i
		} else {
			lines[i] = n.Line
		}
	}
	return text, lines
}

// firstLine is the first line of s, cut for a message.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

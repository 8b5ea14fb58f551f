package doctor

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A workflow is anyone's to write, in a pull request: what doctor prints
// of it (a step's name, a job's id, a file's name, a command) is escaped,
// so that it cannot start a workflow command of the CI's log, send an
// escape sequence to a terminal or reorder the text shown; in the text
// report and in the JSON one's strings alike.
func TestEscapesWhatWorkflowsHold(t *testing.T) {
	t.Parallel()
	r := newRepo(t, systemGitHub).
		editCI(t, "      - name: MCP preflight\n", "      - name: \"MCP \\e[2J\\u202Epreflight\\n::error::pwned\"\n").
		editCI(t, "  mcp-preflight:\n", "  \"mcp\\u2028::warning::job\":\n").
		editCI(t, "run: mcpwatch check --strict", "run: mcpwatch check")
	r.files[".github/workflows/::error title=x::broken.yml"] = "on: [push\n"
	rep := r.examine(t)
	if rep.Gate == nil {
		t.Fatalf("no gate judged:\n%s", text(t, rep))
	}
	findingOf(t, rep, want{"workflow", ".github/workflows/::error title=x::broken.yml", 1, "is not valid YAML", ""})
	if g := rep.Gate; g.Step != `MCP \x1b[2J\u202epreflight\n::error::pwned` || g.Job != `mcp\u2028::warning::job` {
		t.Errorf("the gate's step %q, job %q: not escaped as sanitize.Text escapes", g.Step, g.Job)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"text": text(t, rep), "json": js.String()} {
		if strings.ContainsAny(out, "\x1b\u202e\u2028") {
			t.Errorf("the %s report holds a control character of the workflow:\n%q", what, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if l := strings.TrimLeft(line, " "); strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##") {
				t.Errorf("the %s report has a line a CI runner reads as a command: %q", what, line)
			}
		}
	}
	containsAll(t, "the text report", text(t, rep), `the mcpwatch check of the step "MCP \x1b[2J\u202epreflight\n::error::pwned" of job mcp\u2028::warning::job has no --strict`)
}

// A CI file that is not valid YAML is a finding at the line the parser
// names: the CI refuses the file, so none of its steps runs.
func TestInvalidYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, content string
		line                int
	}{
		{"a workflow", ".github/workflows/other.yaml", "on: push\njobs:\n  a:\n    steps: [\n", 4},
		{"a tab", ".github/workflows/tab.yml", "on: push\njobs:\n\ta: {}\n", 3},
		{"GitLab's file", ".gitlab-ci.yml", "job:\n  script: [x\n  when: always\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, systemGitHub)
			r.files[tc.file] = tc.content
			rep := r.examine(t)
			findingOf(t, rep, want{"workflow", tc.file, tc.line, "is not valid YAML, so the CI refuses it and no step of it runs: yaml: ",
				"fix the YAML; a YAML linter or the CI's own editor points at the line"})
			if rep.Gate == nil || rep.Gate.File != githubGate {
				t.Errorf("the other workflow's gate is still judged: %+v", rep.Gate)
			}
		})
	}
}

// The line of a YAML error, read from its message, or from the first of
// a type error's.
func TestYAMLErrorLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		line int
	}{
		{"a: [\n", 1},
		{"a: b\n  c: d\n", 2},
		{"\ta: b\n", 0}, // no line: the finding is at line 1
	} {
		_, err := parseGitHub("x.yml", []byte(tc.src))
		if err == nil {
			t.Fatalf("%q parses", tc.src)
		}
		if got := yamlErrorLine(err); got != tc.line {
			t.Errorf("%q: line %d, want %d (%v)", tc.src, got, tc.line, err)
		}
	}
	te := &yaml.TypeError{Errors: []string{"line 7: cannot unmarshal !!seq into string", "line 9: another"}}
	if got := yamlErrorLine(te); got != 7 {
		t.Errorf("a type error: line %d, want 7, its first error's", got)
	}
}

// A step's name, for messages: its name:, else its id:, else what it
// uses, else the first line of what it runs, cut.
func TestGitHubStepNames(t *testing.T) {
	t.Parallel()
	src := `jobs:
  j:
    steps:
      - name: Named
        id: ignored
        run: x
      - id: by-id
        run: x
      - uses: actions/checkout@v4
      - run: |
          mcpwatch check --strict --format github --receipt a-rather-long-receipt-name.json
          echo done
`
	f, err := parseGitHub("w.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.jobs[0].steps {
		got = append(got, s.name)
	}
	want := []string{"Named", "by-id", "actions/checkout@v4", "run: mcpwatch check --strict --format github --receipt a-rathe..."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("step names %q, want %q", got, want)
	}
	if s := f.jobs[0].steps[3]; s.fileLine(0) != 11 || s.fileLine(1) != 12 || s.fileLine(9) != 12 {
		t.Errorf("the lines of a run: | block: %v", s.lines)
	}
	if s := f.jobs[0].steps[0]; s.fileLine(0) != 6 {
		t.Errorf("the line of a plain run: %v", s.lines)
	}
}

package doctor

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseGitHub reads a GitHub Actions workflow. A file that is not a
// workflow (no jobs: mapping) gives a file without jobs.
func parseGitHub(rel string, data []byte) (*ciFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := deref(&doc)
	f := &ciFile{path: rel, system: systemGitHub}
	if root == nil || root.Kind != yaml.MappingNode {
		return f, nil
	}
	f.onKey, f.on = lookup(root, "on")
	f.env = envOf(value(root, "env"), "the workflow's env")
	f.defaultsRun = runDefaultsOf(root)
	for _, p := range pairs(value(root, "jobs")) {
		j := &job{file: f, id: p[0].Value, line: p[0].Line, keyNode: p[0]}
		jn := p[1]
		j.env = envOf(value(jn, "env"), fmt.Sprintf("the env of job %s", j.id))
		j.timeout = scalarOf(jn, "timeout-minutes")
		j.ifCond = scalarOf(jn, "if")
		j.mayFail = scalarOf(jn, "continue-on-error")
		j.defaultsRun = runDefaultsOf(jn)
		for i, sn := range items(value(jn, "steps")) {
			j.steps = append(j.steps, githubStep(j, i, sn))
		}
		f.jobs = append(f.jobs, j)
	}
	return f, nil
}

func runDefaultsOf(n *yaml.Node) runDefaults {
	run := value(value(n, "defaults"), "run")
	return runDefaults{shell: scalarOf(run, "shell"), workdir: scalarOf(run, "working-directory")}
}

func githubStep(j *job, i int, sn *yaml.Node) *step {
	s := &step{job: j, index: i, line: sn.Line, with: map[string]scalar{}}
	s.uses = scalarOf(sn, "uses")
	s.shell = scalarOf(sn, "shell")
	s.workdir = scalarOf(sn, "working-directory")
	s.ifCond = scalarOf(sn, "if")
	s.mayFail = scalarOf(sn, "continue-on-error")
	s.timeout = scalarOf(sn, "timeout-minutes")
	s.env = envOf(value(sn, "env"), "the step's env")
	if run := value(sn, "run"); run != nil && run.Kind == yaml.ScalarNode {
		s.script, s.lines = scriptLines(run)
	}
	for _, p := range pairs(value(sn, "with")) {
		if p[1] != nil && p[1].Kind == yaml.ScalarNode {
			s.with[p[0].Value] = scalar{value: p[1].Value, line: p[1].Line}
		}
	}
	switch name, id := scalarOf(sn, "name"), scalarOf(sn, "id"); {
	case name.value != "":
		s.name = name.value
	case id.value != "":
		s.name = id.value
	case s.uses.value != "":
		s.name = s.uses.value
	default:
		s.name = "run: " + firstLine(s.script)
	}
	return s
}

// githubStepShell is the shell a GitHub run step runs in, as written
// (step, job defaults, workflow defaults), "" for the runner's default.
func githubStepShell(s *step) string {
	for _, sh := range []scalar{s.shell, s.job.defaultsRun.shell, s.job.file.defaultsRun.shell} {
		if sh.value != "" {
			return sh.value
		}
	}
	return ""
}

// shellStops reports how a GitHub run step's shell treats a failing
// command, before the script's own set commands: errexit (the step ends at
// the first failing command) and pipefail (a pipeline fails when any of
// its commands does). GitHub runs bash with -e and -o pipefail by default
// and when shell: bash is named, sh with -e; a custom shell ("bash {0}")
// has what its command line says; pwsh, python and cmd return only their
// last command's status.
func shellStops(shell string) (errexit, pipefail bool) {
	switch strings.TrimSpace(shell) {
	case "", "bash":
		return true, true
	case "sh":
		return true, false
	case "pwsh", "powershell", "python", "cmd":
		return false, false
	}
	if !strings.Contains(shell, "{0}") {
		return false, false
	}
	fields := strings.Fields(shell)
	for i, f := range fields {
		if strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "--") {
			if strings.Contains(f, "e") {
				errexit = true
			}
			if strings.Contains(f, "o") && i+1 < len(fields) && fields[i+1] == "pipefail" {
				pipefail = true
			}
		}
	}
	return errexit, pipefail
}

package doctor

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// gitlabKeywords are the top-level keys of .gitlab-ci.yml that are not jobs.
var gitlabKeywords = []string{"default", "include", "stages", "variables", "workflow", "image",
	"services", "cache", "before_script", "after_script", "spec"}

// gitlabDefaults are the keys default: gives every job that does not set
// its own.
var gitlabDefaults = []string{"before_script", "after_script", "artifacts", "timeout"}

// parseGitLab reads a .gitlab-ci.yml: its jobs, with extends: (of jobs and
// hidden jobs of the same file) and default: applied, and !reference tags
// in scripts resolved. include: is not followed.
func parseGitLab(rel string, data []byte) (*ciFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := deref(&doc)
	f := &ciFile{path: rel, system: systemGitLab}
	if root == nil || root.Kind != yaml.MappingNode {
		return f, nil
	}
	f.env = envOf(value(root, "variables"), "the global variables")
	g := gitlab{root: root, defaults: value(root, "default"), merged: map[string]*yaml.Node{}}
	for _, p := range pairs(root) {
		name := p[0].Value
		if slices.Contains(gitlabKeywords, name) || strings.HasPrefix(name, ".") || p[1] == nil || p[1].Kind != yaml.MappingNode {
			continue
		}
		jn := g.job(name, 0)
		if value(jn, "script") == nil {
			continue // a trigger job, or not a job
		}
		j := g.newJob(f, name, p[0].Line, jn)
		j.keyNode = p[0]
		f.jobs = append(f.jobs, j)
	}
	return f, nil
}

type gitlab struct {
	root, defaults *yaml.Node
	merged         map[string]*yaml.Node // job name -> its mapping with extends: applied
}

// job returns the mapping of the job (or hidden job) name with its
// extends: merged in, as GitLab merges them: mappings deeply, anything else
// replaced by the extending job's value.
func (g *gitlab) job(name string, depth int) *yaml.Node {
	if m, ok := g.merged[name]; ok {
		return m
	}
	own := value(g.root, name)
	if own == nil || own.Kind != yaml.MappingNode || depth > 10 {
		return own
	}
	merged := &yaml.Node{Kind: yaml.MappingNode, Line: own.Line, Column: own.Column}
	for _, base := range items(value(own, "extends")) {
		merged = mergeMappings(merged, g.job(base.Value, depth+1))
	}
	merged = mergeMappings(merged, own)
	g.merged[name] = merged
	return merged
}

// mergeMappings returns base with over's keys merged in.
func mergeMappings(base, over *yaml.Node) *yaml.Node {
	if base == nil || base.Kind != yaml.MappingNode || over == nil || over.Kind != yaml.MappingNode {
		return over
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Line: over.Line, Column: over.Column}
	out.Content = append(out.Content, base.Content...)
	for _, p := range pairs(over) {
		k, v := p[0], p[1]
		if i := slices.IndexFunc(out.Content, func(n *yaml.Node) bool { return n.Value == k.Value }); i >= 0 && i%2 == 0 {
			out.Content[i+1] = mergeMappings(deref(out.Content[i+1]), v)
			continue
		}
		out.Content = append(out.Content, k, v)
	}
	return out
}

// inherits reports whether the job takes default:'s key.
func inherits(jn *yaml.Node, key string) bool {
	d := value(value(jn, "inherit"), "default")
	if d == nil {
		return true
	}
	if d.Kind == yaml.ScalarNode {
		return d.Value != "false"
	}
	return slices.ContainsFunc(items(d), func(n *yaml.Node) bool { return n.Value == key })
}

// keyOrDefault is the job's key, else default:'s when the job inherits it.
func (g *gitlab) keyOrDefault(jn *yaml.Node, key string) *yaml.Node {
	if v := value(jn, key); v != nil {
		return v
	}
	if slices.Contains(gitlabDefaults, key) && inherits(jn, key) {
		return value(g.defaults, key)
	}
	return nil
}

func (g *gitlab) newJob(f *ciFile, name string, line int, jn *yaml.Node) *job {
	j := &job{file: f, id: name, line: line}
	j.env = envOf(value(jn, "variables"), fmt.Sprintf("the variables of job %s", name))
	for _, p := range pairs(value(jn, "secrets")) {
		// the value comes from the secrets manager: written as GitLab
		// writes a value taken from elsewhere
		j.secretVars = append(j.secretVars, envVar{name: p[0].Value, value: "$" + p[0].Value, line: p[0].Line,
			scope: fmt.Sprintf("the secrets: of job %s", name)})
	}
	j.timeout = scalarOf(jn, "timeout")
	if !j.timeout.set() {
		if v := g.keyOrDefault(jn, "timeout"); v != nil && v.Kind == yaml.ScalarNode {
			j.timeout = scalar{value: v.Value, line: v.Line}
		}
	}
	if af := value(jn, "allow_failure"); af != nil {
		switch af.Kind {
		case yaml.ScalarNode:
			j.mayFail = scalar{value: af.Value, line: af.Line}
		case yaml.MappingNode:
			// allow_failure: exit_codes: [...]: only those codes pass.
			for _, c := range items(value(af, "exit_codes")) {
				if c.Value == "78" {
					j.mayFail = scalar{value: "exit_codes 78", line: c.Line}
				}
			}
		}
	}
	j.rules, j.only, j.except = value(jn, "rules"), value(jn, "only"), value(jn, "except")
	if a := g.keyOrDefault(jn, "artifacts"); a != nil && a.Kind == yaml.MappingNode {
		line := a.Line
		if k, _ := lookup(jn, "artifacts"); k != nil {
			line = k.Line // the artifacts: key, rather than its first member
		} else if k, _ := lookup(g.defaults, "artifacts"); k != nil {
			line = k.Line
		}
		j.artifacts = &artifacts{line: line, when: scalarOf(a, "when")}
		for _, p := range items(value(a, "paths")) {
			j.artifacts.paths = append(j.artifacts.paths, scalar{value: p.Value, line: p.Line})
		}
		for _, p := range items(value(value(a, "reports"), "junit")) {
			j.artifacts.junit = append(j.artifacts.junit, scalar{value: p.Value, line: p.Line})
		}
	}

	script := &step{job: j, index: 0, name: "script", line: line}
	for _, key := range []string{"before_script", "script"} {
		n := value(jn, key)
		if n == nil && key == "before_script" {
			n = g.keyOrDefault(jn, key)
		}
		if n != nil && script.line == line {
			script.line = n.Line
		}
		g.appendScript(script, n, 0)
	}
	j.steps = append(j.steps, script)
	if n := g.keyOrDefault(jn, "after_script"); n != nil {
		after := &step{job: j, index: 1, name: "after_script", line: n.Line, afterScript: true}
		g.appendScript(after, n, 0)
		j.steps = append(j.steps, after)
	}
	return j
}

// appendScript adds the lines of a script: (a string or a list of them,
// nested lists and !reference [job, key] included) to s.
func (g *gitlab) appendScript(s *step, n *yaml.Node, depth int) {
	n = deref(n)
	if n == nil || depth > 10 {
		return
	}
	if n.Tag == "!reference" && n.Kind == yaml.SequenceNode {
		var target *yaml.Node
		for i, part := range items(n) {
			if i == 0 {
				target = g.job(part.Value, 0)
				if target == nil {
					target = value(g.root, part.Value)
				}
				continue
			}
			target = value(target, part.Value)
		}
		g.appendScript(s, target, depth+1)
		return
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			g.appendScript(s, c, depth+1)
		}
	case yaml.ScalarNode:
		text, lines := scriptLines(n)
		text = strings.TrimSuffix(text, "\n")
		if s.script != "" {
			s.script += "\n"
		}
		s.script += text
		s.lines = append(s.lines, lines...)
	}
}

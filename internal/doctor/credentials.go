package doctor

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Every variable a checked server's ${VAR} needs reaches the gate's
// command: set in the env of the step, of its job or of the workflow (or
// GitLab's variables:), from a secret or a variable. CI gives an unset
// secret as an empty string, so a missing one is a check that runs without
// the credential. Which variables a server needs is what the
// configuration's own expansion asks for (launch.Check with a
// lookup that answers for the step's environment): ${VAR:-default} needs
// nothing, ${A:-${B}} needs B only where A is unset.

// githubRunnerVariables are the variables GitHub's runner sets in every
// job (docs.github.com: "Variables reference", default environment
// variables), and those of the runner's own environment.
var githubRunnerVariables = []string{
	"CI", "GITHUB_ACTION", "GITHUB_ACTION_PATH", "GITHUB_ACTION_REPOSITORY", "GITHUB_ACTIONS", "GITHUB_ACTOR",
	"GITHUB_ACTOR_ID", "GITHUB_API_URL", "GITHUB_BASE_REF", "GITHUB_ENV", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH",
	"GITHUB_GRAPHQL_URL", "GITHUB_HEAD_REF", "GITHUB_JOB", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_REF",
	"GITHUB_REF_NAME", "GITHUB_REF_PROTECTED", "GITHUB_REF_TYPE", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_ID",
	"GITHUB_REPOSITORY_OWNER", "GITHUB_REPOSITORY_OWNER_ID", "GITHUB_RETENTION_DAYS", "GITHUB_RUN_ATTEMPT",
	"GITHUB_RUN_ID", "GITHUB_RUN_NUMBER", "GITHUB_SERVER_URL", "GITHUB_SHA", "GITHUB_STEP_SUMMARY",
	"GITHUB_TRIGGERING_ACTOR", "GITHUB_WORKFLOW", "GITHUB_WORKFLOW_REF", "GITHUB_WORKFLOW_SHA", "GITHUB_WORKSPACE",
	"RUNNER_ARCH", "RUNNER_DEBUG", "RUNNER_ENVIRONMENT", "RUNNER_NAME", "RUNNER_OS", "RUNNER_TEMP", "RUNNER_TOOL_CACHE",
	"HOME", "PATH", "USER", "SHELL", "PWD", "LANG", "HOSTNAME",
}

// runnerSets reports whether the CI runner sets name in every job: GitLab
// sets CI_* and GITLAB_* (its predefined variables).
func runnerSets(system, name string) bool {
	if system == systemGitLab {
		return strings.HasPrefix(name, "CI_") || strings.HasPrefix(name, "GITLAB_") ||
			slices.Contains([]string{"CI", "HOME", "PATH", "USER", "SHELL", "PWD", "LANG", "HOSTNAME"}, name)
	}
	return slices.Contains(githubRunnerVariables, name)
}

// probed returns the servers the command checks: every configured one
// (ignore: already left out), less --skip, or the --server ones.
func (c *candidate) probed() []config.Server {
	var out []config.Server
	for _, s := range c.source.cfg.Servers {
		if (len(c.flags.Servers) == 0 || slices.Contains(c.flags.Servers, s.Name)) && !slices.Contains(c.flags.Skip, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// need is a variable a server needs and the step does not give it.
type need struct {
	variable string
	uses     []string // "server github (env.GITHUB_TOKEN)"
}

func (d *doctor) judgeCredentials(c *candidate) {
	if c.source.cfg == nil {
		return
	}
	file := c.step.job.file
	sub := *c.source.cfg
	sub.Servers = c.probed()

	assumed := map[string]bool{}   // missing, found, and taken as set to find the next
	consulted := map[string]bool{} // variables of the step's environment a server reads
	lookup := func(name string) (string, bool) {
		if assumed[name] {
			return "set", true
		}
		if v, ok := c.sc.vars[name]; ok {
			consulted[name] = true
			lit, isLit := c.sc.literalValue(v, 0)
			switch {
			case !isLit:
				return "set by the CI", true
			case lit == "":
				return "", false // CI's unset secret: empty, missing to a server
			}
			return lit, true
		}
		if runnerSets(file.system, name) {
			return "/set/by/the/runner", true
		}
		return "", false
	}
	var needs []*need
	for range 1000 { // each round takes one more variable as set; a configuration has fewer
		found := map[string]*need{}
		needed := func(variable, use string) {
			n := found[variable]
			if n == nil {
				n = &need{variable: variable}
				found[variable] = n
				needs = append(needs, n)
			}
			n.uses = append(n.uses, use)
		}
		for _, err := range launch.Check(&sub, lookup) {
			var ee *expand.Error
			if !errors.As(err, &ee) || !(errors.Is(err, expand.ErrUnsetVariable) || errors.Is(err, expand.ErrRequired)) || ee.Var == "" || assumed[ee.Var] {
				continue
			}
			needed(ee.Var, fmt.Sprintf("server %q (%s)", ee.Server, ee.Key))
		}
		for _, s := range sub.Servers {
			for _, m := range missingCredentials(s, lookup, assumed) {
				needed(m[0], fmt.Sprintf("server %q (%s)", s.Name, m[1]))
			}
		}
		if len(found) == 0 {
			break
		}
		for name := range found {
			assumed[name] = true
		}
	}

	line := c.step.line
	where := fmt.Sprintf("the env: of %s", c.stepName())
	fix := func(name string) string {
		if file.system == systemGitLab {
			return fmt.Sprintf("add %s: $%s to the variables: of job %s, with its value a masked variable in the project's Settings > CI/CD > Variables (or get it through the job's secrets:)", name, name, c.step.job.id)
		}
		return fmt.Sprintf("add %s: ${{ secrets.%s }} to %s (and the secret to the repository's Settings > Secrets and variables > Actions)", name, name, where)
	}
	if file.system == systemGitLab {
		line, where = c.step.job.line, fmt.Sprintf("the variables: of job %s or of the file", c.step.job.id)
	}
	for _, n := range needs {
		state, at := "is not set in "+where+", nor by an earlier step", line
		if v, ok := c.sc.vars[n.variable]; ok {
			state, at = fmt.Sprintf("is set to an empty value in %s", v.scope), v.line
		}
		c.add(finding("credentials", file.path, at,
			fmt.Sprintf("${%s}, which %s reads, %s: the check runs without it, so it fails on every run (credential_missing) or checks the server without it", n.variable, strings.Join(n.uses, " and "), state),
			fix(n.variable)))
	}

	var names []string
	for name := range consulted {
		if !assumed[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var reached []string
	for _, name := range names {
		v := c.sc.vars[name]
		from := describeSource(v.value)
		if from == "" && secret.IsCredentialName(name) {
			c.add(finding("credentials", file.path, v.line,
				fmt.Sprintf("%s is written in plain text in %s: a credential in the repository is read by everyone who can read the repository", name, v.scope),
				fixPlain(file.system, name)))
			continue
		}
		reached = append(reached, fmt.Sprintf("%s from %s (%s)", name, orDefault(from, "a value written in the file"), v.scope))
	}
	switch {
	case len(reached) > 0:
		c.note("credentials: %s", strings.Join(reached, ", "))
	case len(needs) == 0:
		c.note("credentials: the checked servers read no variable the CI must give")
	}
}

// missingCredentials finds the variables that leave a credential of s
// missing (launch.Resolve: a ${VAR:?message} unset, which is no
// expansion error), as pairs of the variable and the credential: each
// variable the expansion read and found unset is one when taking it as set
// makes the credential present.
func missingCredentials(s config.Server, lookup func(string) (string, bool), assumed map[string]bool) [][2]string {
	var unset []string
	recording := func(name string) (string, bool) {
		v, ok := lookup(name)
		if !ok && !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		return v, ok
	}
	_, given, _ := launch.Resolve(s, recording)
	var out [][2]string
	for _, g := range launch.Missing(given) {
		for _, name := range unset {
			if assumed[name] {
				continue
			}
			with := func(n string) (string, bool) {
				if n == name {
					return "set", true
				}
				return lookup(n)
			}
			_, again, _ := launch.Resolve(s, with)
			if i := slices.IndexFunc(again, func(a probe.GivenCredential) bool { return a.Credential == g.Credential }); i >= 0 && again[i].Present {
				out = append(out, [2]string{name, g.Credential})
			}
		}
	}
	return out
}

// describeSource names where an env value comes from: its ${{ }}
// expressions (GitHub), the variables it takes (GitLab), or "" for a
// literal.
func describeSource(v string) string {
	if m := exprPattern().FindAllString(v, -1); len(m) > 0 {
		return strings.Join(m, " ")
	}
	if strings.Contains(v, "$") {
		return v
	}
	return ""
}

func fixPlain(system, name string) string {
	if system == systemGitLab {
		return fmt.Sprintf("remove the value and make %s a masked variable in the project's Settings > CI/CD > Variables; then rotate the credential, which the repository's history keeps", name)
	}
	return fmt.Sprintf("write %s: ${{ secrets.%s }} instead, with the value in the repository's secrets; then rotate the credential, which the repository's history keeps", name, name)
}

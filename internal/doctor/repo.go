package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// checkRepository judges what the gate relies on in the repository: the
// configuration it checks loads (its contracts files exist and parse) and
// is committed, the lock exists, is committed and covers every server, the
// expected tools are locked and contracted, and a canary sees each
// server's credential.
func (d *doctor) checkRepository(c *candidate) {
	src, servers := d.intended, []config.Server(nil)
	lockPath := ""
	if c != nil && c.flagsErr == nil {
		src = c.source
		if src.cfg != nil {
			servers, lockPath = c.probed(), c.lockPath
		}
	} else if src.cfg != nil {
		servers, lockPath = src.cfg.Servers, src.cfg.Lock
	}
	if in := d.intended; in.err != nil && d.opts.Config != "" && in.path != src.path {
		// the configuration named to doctor, which the gate does not check
		d.configFindings(in)
	}
	if src.err != nil {
		d.configFindings(src)
		return
	}
	tracked, gitErr := d.trackedFiles()
	if gitErr != nil {
		d.add(finding("lock", d.rel(lockPath), 1,
			fmt.Sprintf("cannot tell which files git tracks (%v): the CI checks out only those", gitErr),
			"run mcpwatch doctor at the top of a git repository, with git installed"))
	}
	isTracked := func(p string) bool { return gitErr != nil || tracked[d.rel(p)] }

	if !isTracked(src.path) {
		d.add(finding("configuration", d.rel(src.path), 1,
			fmt.Sprintf("the configuration %s is not tracked by git: the CI's checkout does not have it", d.rel(src.path)),
			fmt.Sprintf("git add %s and commit it (and see that .gitignore does not leave it out)", d.rel(src.path))))
	}
	lock := d.checkLock(lockPath, servers, isTracked)
	d.checkContracts(servers, lock, isTracked)
	if lock != nil {
		d.checkStatic(c, src, lock, lockPath)
	}
	d.checkCanaries(src.cfg, servers, lock)
}

// checkStatic runs check's own judgement of the files (preflight.Static:
// the one check reports from) with the gate's flags: every problem it
// would fail the gate on, before any server answers, is a finding here.
// Without a gate, it judges as --strict, which the gate must have.
func (d *doctor) checkStatic(c *candidate, src configSource, lock *lockstore.Lock, lockPath string) {
	in := preflight.Input{Config: src.cfg, ConfigSource: d.rel(src.path), Lock: lock, LockPath: lockPath}
	strict := true
	if c != nil && c.flagsErr == nil {
		in.Servers, strict = c.flags.Servers, c.flags.Strict
		in.Skip = slices.Clone(c.flags.Skip)
		for _, name := range src.cfg.Ignore {
			if !slices.Contains(c.flags.Servers, name) {
				in.Skip = append(in.Skip, name)
			}
		}
	} else {
		in.Skip = slices.Clone(src.cfg.Ignore)
	}
	flag := ""
	if strict {
		flag = " --strict"
	}
	for _, sr := range preflight.Static(in, strict) {
		for _, p := range sr.Failures() {
			file, line := d.rel(lockPath), 1
			fix := fmt.Sprintf("add server %q back to %s, or relock without it: mcpwatch lock, then commit the lock", sr.Name, d.rel(src.path))
			if p.Kind == verdict.KindCallCoverage {
				i := slices.IndexFunc(src.cfg.Servers, func(s config.Server) bool { return s.Name == sr.Name })
				s := src.cfg.Servers[i]
				file, line = d.rel(s.ContractsFile), 1
				if s.ContractsFile == "" {
					file, line = d.rel(s.Source), serverLine(s)
				}
				fix = fmt.Sprintf("in %s, fill in the \"<fill in ...>\" values of each contract named (an input that works), or set \"disabled\": true on one you do not want called; write a contract for each expected tool named (docs/contracts.md)", file)
			}
			d.add(finding("contracts", file, line,
				fmt.Sprintf("mcpwatch check%s fails on the files alone (exit 78), whatever the servers answer: %s: %s (%s)", flag, sr.Name, p.Message, p.Kind),
				fix))
		}
	}
}

// configFindings reports a configuration that cannot be loaded, one
// finding per problem, each at its file and line where it has them.
func (d *doctor) configFindings(src configSource) {
	if errors.Is(src.err, fs.ErrNotExist) {
		fix := "commit the agent's .mcp.json (or an mcpwatch.yml) at the repository's top, or name it: mcpwatch doctor --config.file PATH"
		if d.opts.Config != "" && src.path == d.intended.path {
			fix = fmt.Sprintf("commit %s, or name the configuration the gate must check: mcpwatch doctor --config.file PATH", d.rel(src.path))
		}
		d.add(finding("configuration", d.rel(src.path), 1,
			fmt.Sprintf("there is no configuration to check: %s", src.err),
			fix))
		return
	}
	for _, err := range unjoin(src.err) {
		file, line, msg := d.rel(src.path), 1, err.Error()
		var fe *config.FieldError
		if errors.As(err, &fe) {
			if fe.File != "" {
				file = d.rel(fe.File)
			}
			line = fe.Line
			if line == 0 {
				line = keyLine(fe.File, fe.Key)
			}
			msg = fe.Problem
			if fe.Key != "" {
				msg = fe.Key + ": " + msg
			}
		}
		d.add(finding("configuration", file, line,
			fmt.Sprintf("the configuration the gate checks cannot be loaded, so every check fails (exit 78): %s", msg),
			"fix it: mcpwatch config check names each problem"))
	}
}

// keyLine returns the line of a dotted key (servers.report.contracts) in a
// YAML or JSON file, or of as much of it as the file holds; 1 when none.
func keyLine(file, key string) int {
	line, _ := keyAt(file, key)
	return line
}

// keyAt is keyLine, and whether the file holds the whole key: a caller
// choosing between places a setting may be (a server's own, the
// defaults') must not take the server's line for its setting.
func keyAt(file, key string) (line int, whole bool) {
	data, err := readfile.Read(filepath.Clean(file), maxCIFileBytes)
	if err != nil || key == "" {
		return 1, false
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return 1, false
	}
	line, node := 1, &root
	for _, part := range strings.Split(key, ".") {
		k, v := lookup(node, strings.Trim(part, `"`))
		if k == nil {
			return line, false
		}
		line, node = k.Line, v
	}
	return line, true
}

// unjoin splits an errors.Join.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// safeGit are the options doctor runs git with in a repository it did not
// write: the checkout's own configuration may name programs git runs for
// it (core.fsmonitor runs one at every index read, ls-files included), and
// a cloned repository's .git/config is not the user's to trust. None runs.
var safeGit = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.untrackedCache=false",
	"-c", "core.pager=cat",
	"--no-optional-locks", // read the index, never write it back
}

// trackedFiles lists the files git tracks, relative to the repository.
func (d *doctor) trackedFiles() (map[string]bool, error) {
	git := d.opts.Git
	if git == nil {
		git = func(args ...string) ([]byte, error) {
			cmd := exec.Command("git", args...) //nolint:gosec // G204: git with doctor's own arguments
			cmd.Dir = d.opts.Dir
			cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil && stderr.Len() > 0 {
				err = errors.New(strings.TrimSpace(stderr.String()))
			}
			return out, err
		}
	}
	out, err := git(append(safeGit, "ls-files", "-z")...)
	if err != nil {
		return nil, err
	}
	tracked := map[string]bool{}
	for _, name := range bytes.Split(out, []byte{0}) {
		if len(name) > 0 {
			tracked[string(name)] = true
		}
	}
	return tracked, nil
}

// checkLock: the lock exists, is tracked and covers every server checked.
func (d *doctor) checkLock(lockPath string, servers []config.Server, tracked func(string) bool) *lockstore.Lock {
	if lockPath == "" {
		return nil
	}
	rel := d.rel(lockPath)
	lock, err := lockstore.Read(lockPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(finding("lock", rel, 1,
			fmt.Sprintf("there is no lock at %s: mcpwatch check fails every run (exit 78) until there is one", rel),
			fmt.Sprintf("run mcpwatch lock, review %s and commit it", rel)))
		return nil
	case err != nil:
		d.add(finding("lock", rel, 1, fmt.Sprintf("the lock cannot be read, so every check fails (exit 78): %v", err),
			"fix it, or write it again with mcpwatch lock"))
		return nil
	}
	if !tracked(lockPath) {
		d.add(finding("lock", rel, 1,
			fmt.Sprintf("the lock %s is not tracked by git: the CI's checkout does not have it, and every check fails", rel),
			fmt.Sprintf("git add %s and commit it (and see that .gitignore does not leave it out)", rel)))
	}
	var unlocked []string
	for _, s := range servers {
		if _, ok := lock.Entry(s.Name); !ok {
			unlocked = append(unlocked, s.Name)
		}
	}
	if len(unlocked) > 0 {
		var fixes []string
		for _, name := range unlocked {
			fixes = append(fixes, "--server "+name)
		}
		d.add(finding("lock", rel, 1,
			fmt.Sprintf("the lock has no entry for %s: no tool of %s is enforced (check reports it only as not locked yet, or fails on it with --strict)", strings.Join(unlocked, ", "), plural(len(unlocked), "that server", "those servers")),
			fmt.Sprintf("run mcpwatch lock %s, review the lock and commit it", strings.Join(fixes, " "))))
	} else if len(servers) > 0 {
		d.verified("lock: %s, tracked by git, covers %s checked", rel, plural(len(servers), "the 1 server", fmt.Sprintf("all %d servers", len(servers))))
	}
	return lock
}

// checkContracts: every contracts file is in the repository and tracked;
// every expected tool (an mcp-probe configuration's expectedTools) is
// locked, so that check fails when it goes. Whether each has a contract
// (the coverage --strict demands) is check's own judgement: checkStatic.
func (d *doctor) checkContracts(servers []config.Server, lock *lockstore.Lock, tracked func(string) bool) {
	var files []string
	for _, s := range servers {
		if f := s.ContractsFile; f != "" && !slices.Contains(files, f) {
			files = append(files, f)
			if !tracked(f) {
				d.add(finding("contracts", d.rel(f), 1,
					fmt.Sprintf("the contracts file %s of server %q is not tracked by git: the CI's checkout does not have it, and the configuration does not load there", d.rel(f), s.Name),
					fmt.Sprintf("git add %s and commit it", d.rel(f))))
			}
		}
		if len(s.ExpectedTools) == 0 {
			continue
		}
		file, line := d.rel(s.Source), locate(s.Source, "expectedTools")
		entry, locked := lock.Entry(s.Name)
		var unlocked []string
		for _, t := range s.ExpectedTools {
			if locked && !slices.Contains(entry.Names(), t) {
				unlocked = append(unlocked, t)
			}
		}
		if len(unlocked) > 0 {
			d.add(finding("contracts", file, line,
				fmt.Sprintf("server %q expects %s, which the lock does not hold: check does not fail when %s", s.Name, strings.Join(unlocked, ", "), plural(len(unlocked), "it goes", "they go")),
				fmt.Sprintf("run mcpwatch lock --server %s once the server lists %s, and commit the lock", sanitize.ShellQuote(s.Name), plural(len(unlocked), "it", "them"))))
		}
	}
	if len(files) > 0 {
		d.verified("contracts: %s, tracked by git", strings.Join(relAll(d, files), ", "))
	}
}

func relAll(d *doctor, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = d.rel(p)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// locate returns the first line of file that holds needle, 1 if none.
func locate(file, needle string) int {
	data, err := readfile.Read(filepath.Clean(file), maxCIFileBytes)
	if err != nil {
		return 1
	}
	if i := bytes.Index(data, []byte(needle)); i >= 0 {
		return bytes.Count(data[:i], []byte{'\n'}) + 1
	}
	return 1
}

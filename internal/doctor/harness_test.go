package doctor

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The fixture of this package's tests: a repository whose CI gate holds
// (testdata/gate: a GitHub workflow or a .gitlab-ci.yml, an mcpwatch.yml
// of an npx server and a remote one whose token a contract watches, its
// contracts and its lock), which each test breaks in one way and reads
// doctor's report of.

// gateRepo is a repository doctor examines: its files by slash path, the
// ones git does not track, doctor's own environment and --config.file.
type gateRepo struct {
	files     map[string]string
	untracked []string
	gitErr    error // what git answers instead of the tracked files
	env       map[string]string
	config    string
	dir       string // where examine last wrote it
}

// newRepo is the fixture with its CI file for system (systemGitHub: at
// .github/workflows/gate.yml; systemGitLab: .gitlab-ci.yml).
func newRepo(t *testing.T, system string) *gateRepo {
	t.Helper()
	r := &gateRepo{files: map[string]string{}}
	for _, name := range []string{"mcpwatch.yml", "report.tools.json", "mcp-tools.lock.json"} {
		r.files[name] = fixture(t, name)
	}
	if system == systemGitLab {
		r.files[".gitlab-ci.yml"] = fixture(t, "gitlab.yml")
	} else {
		r.files[githubGate] = fixture(t, "github.yml")
	}
	return r
}

const githubGate = ".github/workflows/gate.yml"

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gate", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// edit replaces old, which must occur once, in the file name.
func (r *gateRepo) edit(t *testing.T, name, old, new string) *gateRepo {
	t.Helper()
	if n := strings.Count(r.files[name], old); n != 1 {
		t.Fatalf("%s holds %q %d times; the fixture changed: update the test", name, old, n)
	}
	r.files[name] = strings.Replace(r.files[name], old, new, 1)
	return r
}

// ci is the repository's CI file, whichever system it is.
func (r *gateRepo) ci() string {
	if _, ok := r.files[".gitlab-ci.yml"]; ok {
		return ".gitlab-ci.yml"
	}
	return githubGate
}

// editCI is edit of the CI file.
func (r *gateRepo) editCI(t *testing.T, old, new string) *gateRepo {
	t.Helper()
	return r.edit(t, r.ci(), old, new)
}

// examine writes the repository to a new folder and examines it, with
// check's flags read as check reads them (parseCheck) and git answering
// the files it tracks.
func (r *gateRepo) examine(t *testing.T) *Report {
	t.Helper()
	dir := t.TempDir()
	r.dir = dir
	var tracked []string
	for name, content := range r.files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(r.untracked, name) {
			tracked = append(tracked, name)
		}
	}
	slices.Sort(tracked)
	config := r.config
	if config != "" {
		config = filepath.Join(dir, filepath.FromSlash(config))
	}
	return Examine(Options{Dir: dir, Config: config, ParseCheck: parseCheck,
		Getenv: func(k string) string { return r.env[k] },
		Git: func(args ...string) ([]byte, error) {
			if args[len(args)-2] != "ls-files" {
				return nil, errors.New("doctor asked git for more than the files it tracks")
			}
			if r.gitErr != nil {
				return nil, r.gitErr
			}
			return []byte(strings.Join(tracked, "\x00") + "\x00"), nil
		}})
}

// parseCheck reads the flags of an mcpwatch check command line that
// doctor judges, with the names and shorthands check gives them; an
// unknown flag or an argument is a usage error, as in check.
func parseCheck(args []string) (CheckFlags, error) {
	var f CheckFlags
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&f.ConfigFile, "config.file", "c", "", "")
	fs.StringVarP(&f.LockFile, "lock.file", "l", "", "")
	fs.BoolVar(&f.Strict, "strict", false, "")
	fs.BoolVar(&f.Strict, "fail-on-warn", false, "")
	fs.StringVar(&f.Format, "format", "text", "")
	fs.StringVarP(&f.Output, "output", "o", "", "")
	fs.StringVar(&f.Receipt, "receipt", "", "")
	fs.DurationVar(&f.Timeout, "timeout", 0, "")
	fs.StringArrayVar(&f.Servers, "server", nil, "")
	fs.StringArrayVar(&f.Skip, "skip", nil, "")
	if err := fs.Parse(args); err != nil {
		return CheckFlags{}, err
	}
	if fs.NArg() > 0 {
		return CheckFlags{}, errors.New("unexpected argument " + fs.Arg(0))
	}
	return f, nil
}

// change is one edit of the fixture, and what doctor says of the
// repository then: a finding, or (want nil) that the gate holds, having
// verified what verified says.
type change struct {
	name     string
	file     string // the file to edit; "" for the CI file
	old, new string
	want     *want
	verified string
}

// judgeChanges examines, for each change, the fixture of system with the
// change made (and then prepare's, when not nil), each in a subtest of its
// own, in parallel.
func judgeChanges(t *testing.T, system string, prepare func(t *testing.T, c change, r *gateRepo), changes []change) {
	t.Helper()
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, system)
			if c.file == "" {
				r.editCI(t, c.old, c.new)
			} else {
				r.edit(t, c.file, c.old, c.new)
			}
			if prepare != nil {
				prepare(t, c, r)
			}
			rep := r.examine(t)
			if c.want == nil {
				containsAll(t, "what doctor verified", holds(t, rep), c.verified)
				return
			}
			if rep.OK || len(rep.Verified) != 0 {
				t.Errorf("the gate holds, or a gate that does not lists what it verified:\n%s", text(t, rep))
			}
			findingOf(t, rep, *c.want)
		})
	}
}

// want is a finding a test expects: its check, file and line, and words
// its problem and its fix hold.
type want struct {
	check, file string
	line        int
	problem     string
	fix         string
}

// findingOf returns the finding w describes, failing the test (with every
// finding listed) when there is none.
func findingOf(t *testing.T, rep *Report, w want) Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Check == w.check && f.File == w.file && (w.line == 0 || f.Line == w.line) &&
			strings.Contains(f.Problem, w.problem) && strings.Contains(f.Fix, w.fix) {
			return f
		}
	}
	t.Errorf("no %s finding at %s:%d saying %q, fixed by %q; the findings:\n%s", w.check, w.file, w.line, w.problem, w.fix, text(t, rep))
	return Finding{}
}

// holds fails the test unless the gate holds, and returns what doctor
// verified.
func holds(t *testing.T, rep *Report) string {
	t.Helper()
	if !rep.OK || len(rep.Findings) != 0 {
		t.Fatalf("the gate does not hold:\n%s", text(t, rep))
	}
	return strings.Join(rep.Verified, "\n")
}

// text is the report as WriteText writes it.
func text(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// containsAll fails the test for each of parts that s does not hold.
func containsAll(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s does not say %q:\n%s", what, p, s)
		}
	}
}

// Package doctor proves that a repository's CI gate enforces what its
// team trusts: that some CI step runs mcpwatch check on the intended
// configuration, strict, with CI output and a receipt it then uploads, on
// pull requests and on a schedule, with every credential the servers need
// reaching it; and that the lock, the contracts and the servers' start-up
// allowances it relies on hold.
//
// It reads GitHub Actions workflows (.github/workflows/*.yml, *.yaml) and
// GitLab CI's .gitlab-ci.yml with the project's YAML library, every value
// with its line, and the shell of their steps with a small reader of its
// own (shell.go). Everything it prints of those files passes through
// internal/util/sanitize, when a finding is made.
package doctor

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Options say where doctor looks, and how it reads mcpwatch check's flags.
type Options struct {
	// Dir is the repository's top directory.
	Dir string
	// Config is the configuration the gate must check, as --config.file
	// names it (relative to Dir); "" for the one mcpwatch check run in Dir
	// reads.
	Config string
	// Getenv reads doctor's own environment: the variables that choose a
	// configuration ($MCP_CONFIG, ...) for the intended one.
	Getenv func(string) string
	// ParseCheck parses the arguments of mcpwatch check (after "check")
	// with check's own flags, so that doctor reads a command as check
	// would; an error is check's usage error.
	ParseCheck func(args []string) (CheckFlags, error)
	// Git runs git with args in Dir and returns its standard output; nil
	// runs the git on PATH.
	Git func(args ...string) ([]byte, error)
}

// CheckFlags are the flags of an mcpwatch check command line that doctor
// judges.
type CheckFlags struct {
	ConfigFile string
	LockFile   string
	Strict     bool   // --strict or --fail-on-warn
	Format     string // text, json, junit or github
	Output     string
	Receipt    string
	Timeout    time.Duration // 0: each server's own
	Servers    []string
	Skip       []string
}

// Finding is one way the gate falls short: where, what, and the fix.
type Finding struct {
	// Check names the group of checks it comes from: workflow, gate,
	// receipt, triggers, credentials, timeout, configuration, lock,
	// contracts, canary or startup.
	Check   string `json:"check"`
	File    string `json:"file"` // relative to the repository
	Line    int    `json:"line"` // 1-based
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// Gate is the CI step doctor judged: the one that passes, or the one
// closest to passing.
type Gate struct {
	File    string `json:"file"`
	Line    int    `json:"line"` // the line of the mcpwatch check command
	Job     string `json:"job"`
	Step    string `json:"step"`
	Command string `json:"command"` // the command, as written
	// Config is the configuration it checks; Lock its lock.
	Config string `json:"config,omitempty"`
	Lock   string `json:"lock,omitempty"`
}

// Report is doctor's verdict.
type Report struct {
	OK       bool      `json:"ok"`
	Gate     *Gate     `json:"gate"` // nil when no CI step runs mcpwatch check
	Findings []Finding `json:"findings"`
	// Verified says, one line each, what holds: for a person reading
	// why the gate is sound.
	Verified []string `json:"verified"`
}

// doctor is one examination.
type doctor struct {
	opts     Options
	files    []*ciFile
	intended configSource
	report   Report
}

// Examine judges the CI gate of the repository in opts.Dir.
func Examine(opts Options) *Report {
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	d := &doctor{opts: opts}
	d.readCI()
	d.intended = discoverConfig(opts.Config, opts.Dir, opts.Getenv)
	gate := d.judgeGate()
	d.checkRepository(gate)
	d.report.OK = len(d.report.Findings) == 0
	if d.report.Findings == nil {
		d.report.Findings = []Finding{}
	}
	if d.report.Verified == nil || !d.report.OK {
		d.report.Verified = []string{}
	}
	return &d.report
}

// finding makes a finding, every text sanitized: file names, values and
// commands come from files anyone with a pull request can write.
func finding(check, file string, line int, problem, fix string) Finding {
	if line < 1 {
		line = 1
	}
	return Finding{Check: check, File: echo(file), Line: line, Problem: echo(problem), Fix: echo(fix)}
}

// Bounds of what doctor reads of a repository and echoes of it.
const (
	maxCIFileBytes = 8 << 20 // a workflow file: GitHub refuses those past 512 KiB
	maxEchoBytes   = 2048    // of one finding's text, before escaping: a 2 MB line is not echoed whole
)

// echo is what doctor prints of text that comes from a file anyone can
// change: cut, then escaped (sanitize.Text).
func echo(s string) string { return sanitize.Text(sanitize.Truncate(s, maxEchoBytes)) }

// safe is sanitize.Text: what doctor prints of a file anyone can change.
func safe(s string) string { return echo(s) }

// add records a finding, its words naming the repository's paths from its
// top: the folder doctor ran in says nothing to a reader of a CI log.
func (d *doctor) add(f Finding) {
	f.Problem, f.Fix = d.relText(f.Problem), d.relText(f.Fix)
	d.report.Findings = append(d.report.Findings, f)
}

// relText writes the repository's absolute paths in a text from its top
// ("." for the top itself). Only the folder itself is rewritten: a path
// that merely starts with its name (/w/repo.bak beside /w/repo) is kept.
func (d *doctor) relText(s string) string {
	dir := filepath.Clean(d.opts.Dir)
	if !filepath.IsAbs(dir) || dir == string(filepath.Separator) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, dir)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(dir):]
		r, _ := utf8.DecodeRuneInString(rest)
		switch {
		case r == filepath.Separator:
			rest = rest[1:]
		case rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".-_~", r)):
			b.WriteByte('.')
		default:
			b.WriteString(dir)
		}
		s = rest
	}
}

func (d *doctor) verified(format string, args ...any) {
	d.report.Verified = append(d.report.Verified, echo(fmt.Sprintf(format, args...)))
}

// rel returns an absolute path relative to the repository, slash-separated.
func (d *doctor) rel(p string) string {
	if r, err := filepath.Rel(d.opts.Dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// readCI reads every CI file of the repository.
func (d *doctor) readCI() {
	var names []string
	for _, pattern := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(d.opts.Dir, filepath.FromSlash(pattern)))
		names = append(names, m...)
	}
	sort.Strings(names)
	if _, err := os.Stat(filepath.Join(d.opts.Dir, ".gitlab-ci.yml")); err == nil {
		names = append(names, filepath.Join(d.opts.Dir, ".gitlab-ci.yml"))
	}
	for _, name := range names {
		rel := d.rel(name)
		// A workflow is anyone's to write: a symlink to /dev/zero, a named
		// pipe or a file of gigabytes is refused, not read.
		data, err := readfile.Read(name, maxCIFileBytes)
		if err != nil {
			d.add(finding("workflow", rel, 1, fmt.Sprintf("cannot be read: %v", err), "make it readable"))
			continue
		}
		parse := parseGitHub
		if path.Base(rel) == ".gitlab-ci.yml" {
			parse = parseGitLab
		}
		f, err := parse(rel, data)
		if err != nil {
			d.add(finding("workflow", rel, yamlErrorLine(err), "is not valid YAML, so the CI refuses it and no step of it runs: "+err.Error(),
				"fix the YAML; a YAML linter or the CI's own editor points at the line"))
			continue
		}
		d.files = append(d.files, f)
	}
}

// yamlErrorLine reads the line out of a YAML error ("yaml: line 7: ...").
func yamlErrorLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		_, _ = fmt.Sscanf(msg[i:], "line %d", &line)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && line == 0 && len(te.Errors) > 0 {
		_, _ = fmt.Sscanf(te.Errors[0], "line %d", &line)
	}
	return line
}

// ciNames lists the CI files read, for messages.
func (d *doctor) ciNames() string {
	var names []string
	for _, f := range d.files {
		names = append(names, f.path)
	}
	if len(names) == 0 {
		return "no CI file (.github/workflows/*.yml, .gitlab-ci.yml)"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

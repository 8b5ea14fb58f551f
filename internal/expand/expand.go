package expand

// Package expand is the ${...} reference language of a server's
// configuration: its syntax (checked at load by internal/config), its
// expansion (at every probe, by the runner's build of a target) and its
// redaction (what a printed server shows), all from one parse.
//
// Reference syntax, the same in mcpwatch.yml and in every imported client
// config:
//
//	${VAR}              the variable's value; unset is an error, set-but-empty gives ""
//	                    (in a credential's value, unset and empty are alike: the
//	                    credential is missing, credential_missing; see launch.Resolve)
//	${VAR:-default}     default when VAR is unset OR empty, as in the shell; ${VAR:-}
//	                    says "may be empty"
//	${VAR:?message}     VAR must be set and non-empty, as in the shell: otherwise the
//	                    probe fails with message (a credential: credential_missing)
//	${env:VAR}          VS Code's spelling of ${VAR} (":-default" allowed too)
//	${file:PATH}        the file's contents, one trailing newline trimmed; a
//	                    missing or unreadable file is an error, an empty file gives ""
//	${input:ID}         a VS Code input (see inputs in internal/config load.go); without an
//	                    inputs entry, the variable MCPWATCH_INPUT_<ID>
//	${workspaceFolder}  for servers imported from a client config, the project
//	                    folder (the one holding .vscode/); also ${workspaceFolderBasename},
//	                    ${userHome} and ${pathSeparator}, as VS Code and Cursor define them
//	$$                  a literal $ (so $${VAR} is the literal text ${VAR})
//
// References nest inside a default and a file path:
// ${file:${CREDENTIALS_DIRECTORY}/token}, ${A:-${B}}. A default or a path
// cannot contain "}". A "$" not followed by "{" or "$" is kept as written,
// and $VAR without braces is not expanded (Claude Code does not expand it
// either). A file path starting with "~/" is relative to $HOME; another
// relative path is relative to the config file's directory (the working
// directory for a bare Expand).

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// Sentinel kinds of Error, for errors.Is.
var (
	// ErrUnsetVariable: a ${VAR} (or ${input:ID}) named something unset.
	ErrUnsetVariable = errors.New("unset variable")
	// ErrSecretFile: a ${file:PATH} (or another file a server names: its
	// envFile, private key, CA) could not be read. It is reported apart
	// from an empty credential: it is a wiring fault.
	ErrSecretFile = errors.New("unreadable secret file")
	// ErrSyntax: a malformed reference, such as "${" without "}".
	ErrSyntax = errors.New("bad reference syntax")
	// ErrRequired: a ${VAR:?message} whose variable is unset or empty.
	ErrRequired = errors.New("required variable unset or empty")
)

// MaxSecretBytes is what a secret file may hold at most (see readfile,
// which also refuses a named pipe or a device): a secret is small.
const MaxSecretBytes = 1 << 20

// Error is why a string could not be expanded. It never holds the
// value being expanded nor a file's contents, only names.
type Error struct {
	Server string // server name, when expanding a server's field
	Key    string // the field, e.g. "env.REPORT_API_TOKEN" or "headers.Authorization"
	Source string // the file that defined the server

	Var string // the unset variable, for ErrUnsetVariable and ErrRequired
	// Message is a ${VAR:?message}'s message, for ErrRequired.
	Message string
	Input   string // the VS Code input ID, for an unresolved ${input:ID}
	File    string // the secret file, for ErrSecretFile
	Offset  int    // byte offset of a syntax error in the raw string

	Kind  error // ErrUnsetVariable, ErrSecretFile, ErrSyntax or ErrRequired
	Cause error // underlying error (e.g. fs.ErrNotExist), or nil
	// Problem is what is wrong and the fix, naming no value.
	Problem string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q", e.Server)
		if e.Source != "" {
			fmt.Fprintf(&b, " (%s)", e.Source)
		}
		if e.Key != "" {
			fmt.Fprintf(&b, " %s", e.Key)
		}
		b.WriteString(": ")
	} else if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Unwrap lets errors.Is match both the kind (ErrSecretFile) and the cause
// (fs.ErrNotExist).
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// Expand substitutes every reference in s (syntax above). lookup reads a
// variable; os.LookupEnv fits. Relative ${file:...} paths are read from the
// working directory.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	return Expander{Lookup: lookup}.Expand(s)
}

// Expander is Expand with the context of one server: where relative file
// paths start, its VS Code inputs and workspace folder.
type Expander struct {
	Lookup    func(string) (string, bool)
	BaseDir   string           // for relative ${file:...} paths; "" is the working directory
	Inputs    map[string]Input // VS Code inputs declared for the server's source
	Workspace string           // ${workspaceFolder}; "" when not imported from VS Code
	// Missing, when set, hears of each reference without a default that
	// gave no value, unset ("${TOKEN} is not set", which is then no error)
	// or empty ("${TOKEN} is set but empty"): in a credential's value, that
	// credential is missing either way, since both are the same problem to
	// whoever is paged. ${VAR:-} is never reported. A variable in a
	// ${file:...} path is not the credential: unset, it stays an error.
	Missing func(why string)
}

// Expand substitutes every reference in s.
func (x Expander) Expand(s string) (string, error) {
	t, err := parse(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := x.eval(t, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// refKind is what a ${...} reference reads.
type refKind int

const (
	refLiteral refKind = iota
	refVar
	refFile
	refInput
)

// part is a literal run or one reference of a parsed string.
type part struct {
	kind   refKind
	text   string    // literal text, variable name or input ID
	def    *template // ${VAR:-def}; nil when no default was given
	path   template  // ${file:path}
	offset int       // where the reference starts, for error messages
	raw    string    // the reference as written, for printing
	head   string    // the reference up to its name ("${env:TOKEN"), for printing with a redacted default
	defRaw string    // the default as written
	// required is a ${VAR:?message}: unset or empty is an error with
	// message (literal text).
	required bool
	message  string
}

type template []part

// Check reports a malformed reference in s (an *Error of kind ErrSyntax):
// load calls it on every expandable value, so a typo is reported at load,
// not at the first probe.
func Check(s string) error {
	_, err := parse(s)
	return err
}

// parse reads s into its literal runs and references, once: expansion
// and redaction both work on what it returns.
func parse(s string) (template, error) {
	p := parser{s: s}
	t, err := p.parse(false)
	if err != nil {
		return nil, err
	}
	return t, nil
}

type parser struct {
	s     string
	i     int
	depth int // of the reference being read: ${A:-${B}} is two deep
}

// maxNesting bounds how deep references nest (${file:${DIR}/x} is two):
// a parser and an expander that recurse must not be made to overflow the
// stack by a hostile or generated configuration.
const maxNesting = 16

func (p *parser) syntax(offset int, format string, args ...any) error {
	return &Error{Kind: ErrSyntax, Offset: offset,
		Problem: fmt.Sprintf("bad reference at byte %d: %s (write $$ for a literal $)", offset, fmt.Sprintf(format, args...))}
}

// parse reads literals and references up to the end of s or, inside a
// reference, up to its closing brace (left for the caller to consume).
func (p *parser) parse(inRef bool) (template, error) {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t = append(t, part{kind: refLiteral, text: lit.String()})
			lit.Reset()
		}
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case inRef && c == '}':
			flush()
			return t, nil
		case c == '$' && strings.HasPrefix(p.s[p.i:], "$$"):
			lit.WriteByte('$')
			p.i += 2
		case c == '$' && strings.HasPrefix(p.s[p.i:], "${"):
			flush()
			ref, err := p.ref()
			if err != nil {
				return nil, err
			}
			t = append(t, ref)
		default:
			lit.WriteByte(c)
			p.i++
		}
	}
	flush()
	return t, nil
}

// ref reads one ${...} reference starting at p.i.
func (p *parser) ref() (part, error) {
	start := p.i
	if p.depth == maxNesting {
		return part{}, p.syntax(start, "references nest more than %d deep", maxNesting)
	}
	p.depth++
	defer func() { p.depth-- }()
	r, err := p.refBody()
	if err != nil {
		return part{}, err
	}
	r.raw = p.s[start:p.i]
	return r, nil
}

func (p *parser) refBody() (part, error) {
	start := p.i
	p.i += 2 // "${"
	rest := p.s[p.i:]
	switch {
	case strings.HasPrefix(rest, "file:"):
		p.i += len("file:")
		path, err := p.parse(true)
		if err != nil {
			return part{}, err
		}
		if err := p.close(start); err != nil {
			return part{}, err
		}
		if len(path) == 0 {
			return part{}, p.syntax(start, "${file:} needs a path")
		}
		return part{kind: refFile, path: path, offset: start}, nil
	case strings.HasPrefix(rest, "input:"):
		p.i += len("input:")
		id := p.token(isInputIDByte)
		if id == "" {
			return part{}, p.syntax(start, "${input:ID} needs an ID of letters, digits, '.', '_' or '-'")
		}
		if err := p.close(start); err != nil {
			return part{}, err
		}
		return part{kind: refInput, text: id, offset: start}, nil
	case strings.HasPrefix(rest, "env:"):
		p.i += len("env:")
	}
	name := p.token(isNameByte)
	if name == "" || isDigit(name[0]) {
		return part{}, p.syntax(start, "expected a variable name ([A-Za-z_][A-Za-z0-9_]*), file:PATH, env:VAR or input:ID after ${")
	}
	r := part{kind: refVar, text: name, offset: start, head: p.s[start:p.i]}
	if strings.HasPrefix(p.s[p.i:], ":?") {
		p.i += 2
		end := strings.IndexByte(p.s[p.i:], '}')
		if end < 0 {
			return part{}, p.syntax(start, "missing closing }")
		}
		r.required, r.message = true, strings.TrimSpace(p.s[p.i:p.i+end])
		if strings.Contains(r.message, "${") {
			return part{}, p.syntax(start, "the message of ${VAR:?message} is plain text, without references")
		}
		p.i += end
	} else if strings.HasPrefix(p.s[p.i:], ":-") {
		p.i += 2
		defStart := p.i
		def, err := p.parse(true)
		if err != nil {
			return part{}, err
		}
		r.def, r.defRaw = &def, p.s[defStart:p.i]
	}
	if err := p.close(start); err != nil {
		return part{}, err
	}
	return r, nil
}

// close consumes the "}" ending the reference that started at start.
func (p *parser) close(start int) error {
	if p.i >= len(p.s) {
		return p.syntax(start, "missing closing }")
	}
	if p.s[p.i] != '}' {
		return p.syntax(start, "unsupported form; use ${VAR}, ${VAR:-default}, ${VAR:?message}, ${env:VAR}, ${file:PATH} or ${input:ID}")
	}
	p.i++
	return nil
}

func (p *parser) token(ok func(byte) bool) string {
	j := p.i
	for j < len(p.s) && ok(p.s[j]) {
		j++
	}
	tok := p.s[p.i:j]
	p.i = j
	return tok
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isInputIDByte(c byte) bool { return isNameByte(c) || c == '-' || c == '.' }

func (x Expander) eval(t template, b *strings.Builder) error {
	for _, p := range t {
		switch p.kind {
		case refLiteral:
			b.WriteString(p.text)
		case refVar:
			v, err := x.variable(p)
			if err != nil {
				return err
			}
			b.WriteString(v)
		case refFile:
			v, err := x.file(p)
			if err != nil {
				return err
			}
			b.WriteString(v)
		case refInput:
			v, err := x.input(p)
			if err != nil {
				return err
			}
			b.WriteString(v)
		}
	}
	return nil
}

func (x Expander) variable(p part) (string, error) {
	if v, ok := x.clientVariable(p.text); ok {
		return v, nil
	}
	v, ok := x.lookupVar(p.text)
	if p.required && v == "" {
		msg := p.message
		if msg == "" {
			msg = "it is required"
		}
		state := "empty"
		if !ok {
			state = "not set"
		}
		return "", &Error{Kind: ErrRequired, Var: p.text, Message: p.message,
			Problem: fmt.Sprintf("variable %s is %s: %s", p.text, state, msg)}
	}
	if p.def != nil && v == "" {
		var b strings.Builder
		if err := x.eval(*p.def, &b); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	if !ok && x.Missing != nil {
		x.Missing(fmt.Sprintf("${%s} is not set", p.text))
		return "", nil
	}
	if !ok {
		return "", &Error{Kind: ErrUnsetVariable, Var: p.text,
			Problem: fmt.Sprintf("variable %s is not set: set %s or use ${%s:-} for an empty default", p.text, p.text, p.text)}
	}
	if v == "" && p.def == nil && x.Missing != nil {
		x.Missing(fmt.Sprintf("${%s} is set but empty", p.text))
	}
	return v, nil
}

// clientVariable answers the variables VS Code and Cursor define, for
// servers imported from a client config.
func (x Expander) clientVariable(name string) (string, bool) {
	if x.Workspace == "" {
		return "", false
	}
	switch name {
	case "workspaceFolder":
		return x.Workspace, true
	case "workspaceFolderBasename":
		return filepath.Base(x.Workspace), true
	case "pathSeparator":
		return string(filepath.Separator), true
	case "userHome":
		if home, ok := x.lookupVar("HOME"); ok && home != "" {
			return home, true
		}
	}
	return "", false
}

func (x Expander) lookupVar(name string) (string, bool) {
	if x.Lookup == nil {
		return "", false
	}
	return x.Lookup(name)
}

func (x Expander) file(p part) (string, error) {
	var b strings.Builder
	px := x
	px.Missing = nil // the path is no credential: an unset variable in it is a wiring fault
	if err := px.eval(p.path, &b); err != nil {
		return "", err
	}
	path, ok := x.Path(b.String())
	if !ok {
		return "", &Error{Kind: ErrUnsetVariable, Var: "HOME",
			Problem: fmt.Sprintf("secret file %s starts with ~/ but HOME is not set and the user has no home directory: set HOME or write an absolute path", path)}
	}
	content, err := ReadSecret(path)
	if err != nil {
		return "", &Error{Kind: ErrSecretFile, File: path, Cause: err,
			Problem: fmt.Sprintf("cannot read secret file %s: %s; create it or fix the ${file:...} path", path, FileProblem(err))}
	}
	if content == "" && x.Missing != nil {
		x.Missing(fmt.Sprintf("the file %s (${file:...}) is empty", path))
	}
	return content, nil
}

// Path resolves an expanded path as every path a server names is
// resolved (a ${file:...}, its command, cwd, env file, CA, key and token
// files): "~/" by Home, a relative one against BaseDir (as it is when
// BaseDir is ""). ok is false for a "~/" path with no home at all: it is
// then returned as written, never joined to a directory.
func (x Expander) Path(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "~/"):
		return Home(p, x.lookupVar)
	case p == "" || filepath.IsAbs(p) || x.BaseDir == "":
		return p, true
	}
	return filepath.Join(x.BaseDir, p), true
}

// ExpandPath expands v and resolves the path it gives (Path).
func (x Expander) ExpandPath(v string) (string, error) {
	p, err := x.Expand(v)
	if err != nil {
		return "", err
	}
	p, _ = x.Path(p)
	return p, nil
}

// Credential expands v, a credential's value, and says why it has no
// value, if it has none: v written empty (a placeholder never filled in,
// or a shell's empty $VAR), each reference without a default that gave
// nothing (unset or empty: one problem to whoever is paged), a
// ${VAR:?message} unset or empty (its message). err is any other problem,
// a wiring fault.
func (x Expander) Credential(v string) (out string, why []string, err error) {
	if v == "" {
		why = append(why, "it is written empty")
	}
	x.Missing = func(w string) { why = append(why, w) }
	out, err = x.Expand(v)
	if ee := (*Error)(nil); errors.As(err, &ee) && errors.Is(err, ErrRequired) {
		return "", append(why, ee.Problem), nil
	}
	return out, why, err
}

// ReadSecret reads a secret file: at most MaxSecretBytes, one trailing
// newline trimmed, as `echo token > file` leaves one.
func ReadSecret(path string) (string, error) {
	data, err := readfile.Read(path, MaxSecretBytes)
	if err != nil {
		return "", err
	}
	s := string(data)
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t, nil
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// FileProblem is err of a file read, without the path an *fs.PathError
// repeats (the message names it once).
func FileProblem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// inputEnvVar is the variable that answers ${input:ID} when the config names
// no source for it: MCPWATCH_INPUT_ + the ID upper-cased, every byte that is
// not a letter or digit turned into "_" ("api-key" -> MCPWATCH_INPUT_API_KEY).
func inputEnvVar(id string) string {
	b := []byte(strings.ToUpper(id))
	for i, c := range b {
		if !isNameByte(c) {
			b[i] = '_'
		}
	}
	return "MCPWATCH_INPUT_" + string(b)
}

func (x Expander) input(p part) (string, error) {
	v, err := x.inputValue(p)
	if x.Missing != nil {
		if ee := (*Error)(nil); errors.As(err, &ee) && errors.Is(err, ErrUnsetVariable) {
			x.Missing(ee.Problem)
			return "", nil
		}
		if err == nil && v == "" {
			x.Missing(fmt.Sprintf("${input:%s} is empty", p.text))
		}
	}
	return v, err
}

func (x Expander) inputValue(p part) (string, error) {
	in, declared := x.Inputs[p.text]
	switch {
	case declared && in.File != "":
		path := in.File // made absolute at load
		content, err := ReadSecret(path)
		if err != nil {
			return "", &Error{Kind: ErrSecretFile, Input: p.text, File: path, Cause: err,
				Problem: fmt.Sprintf("input %s: cannot read file %s: %s; create it or fix inputs.%s.file", p.text, path, FileProblem(err), p.text)}
		}
		return content, nil
	case declared && in.Env != "":
		if v, ok := x.lookupVar(in.Env); ok {
			return v, nil
		}
		return "", &Error{Kind: ErrUnsetVariable, Input: p.text, Var: in.Env,
			Problem: fmt.Sprintf("input %s: variable %s is not set: set %s", p.text, in.Env, in.Env)}
	}
	name := inputEnvVar(p.text)
	if v, ok := x.lookupVar(name); ok {
		return v, nil
	}
	return "", &Error{Kind: ErrUnsetVariable, Input: p.text, Var: name,
		Problem: fmt.Sprintf("input %s is not resolved (mcpwatch never prompts): set %s, or add inputs: {%s: {env: VAR}} or {file: PATH} to mcpwatch.yml", p.text, name, p.text)}
}

// Input is a VS Code input: resolved from an environment variable or a
// file, never prompted for.
type Input struct {
	Env  string
	File string // absolute
}

// IsFileReference reports whether v is exactly one ${file:PATH}
// reference, as a refresh token must be (the file a rotated one is
// written back to).
func IsFileReference(v string) bool {
	_, ok := fileReference(v)
	return ok
}

// fileReference returns the path template of a value that is exactly one
// ${file:PATH} reference.
func fileReference(v string) (template, bool) {
	t, err := parse(v)
	if err != nil || len(t) != 1 || t[0].kind != refFile {
		return nil, false
	}
	return t[0].path, true
}

// FilePath expands the path of v, a value that is exactly one
// ${file:PATH} reference, without reading the file (it may not exist
// yet: a refresh token's file before mcpwatch login writes it). ok is
// false for any other value.
func (x Expander) FilePath(v string) (path string, ok bool, err error) {
	pathT, ok := fileReference(v)
	if !ok {
		return "", false, nil
	}
	var b strings.Builder
	if err := x.eval(pathT, &b); err != nil {
		return "", true, err
	}
	return b.String(), true, nil
}

// ReferencesSecret reports whether a value holds a reference to a secret:
// a ${file:...}, or a variable whose name says credential.
func ReferencesSecret(v string) bool {
	t, err := parse(v)
	if err != nil {
		return false
	}
	for _, p := range t {
		if p.kind == refFile || p.kind == refVar && secret.IsCredentialName(p.text) {
			return true
		}
	}
	return false
}

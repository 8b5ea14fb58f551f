package doctor

import (
	"strings"
)

// A reader of the POSIX shell a CI step runs: enough to find the commands of
// a script, their words after quote removal, and how each is joined to the
// next, so that doctor can tell which command runs mcpwatch check, with
// which flags, and whether its failure fails the step.
//
// It is not a shell. It reads line continuations, quotes, comments, here
// documents, redirections, the operators that join commands (&&, ||, |, ;,
// &) and the reserved words that make a command a condition (if, while,
// until) or negate it (!). It expands nothing itself: a word keeps its
// $NAME, ${NAME} and ${{ expression }} parts apart, and resolve fills in
// those the workflow sets to a literal; $(...), `...` and the rest stay
// unknown ("dynamic").

type pieceKind int

const (
	pieceLit   pieceKind = iota // literal text, quotes removed
	pieceVar                    // $NAME or ${NAME}
	pieceExpr                   // ${{ expression }}: GitHub Actions substitutes it before the shell runs
	pieceDynam                  // anything else the shell computes: $(...), `...`, ${X:-y}, $1
)

type piece struct {
	kind pieceKind
	text string // literal text; the variable's name; the expression, trimmed; the part as written
}

// word is one shell word.
type word struct {
	pieces []piece
	quoted bool // some of it was quoted or escaped: then it is no reserved word and no assignment
	line   int  // the script's line (0-based) where the word starts
}

// raw is the word as a person would write it unquoted: literal text, and
// every other part as written ($NAME, ${{ expr }}, $(...)). Two words with
// the same raw text name the same thing, resolved or not.
func (w word) raw() string {
	var b strings.Builder
	for _, p := range w.pieces {
		switch p.kind {
		case pieceLit, pieceDynam:
			b.WriteString(p.text)
		case pieceVar:
			b.WriteString("${" + p.text + "}")
		case pieceExpr:
			b.WriteString("${{ " + p.text + " }}")
		}
	}
	return b.String()
}

// literal returns the word's text when it is all literal.
func (w word) literal() (string, bool) {
	var b strings.Builder
	for _, p := range w.pieces {
		if p.kind != pieceLit {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// resolver fills in the parts of a word the workflow knows: a variable (of
// the step's environment, or set earlier in the script) or a ${{ }}
// expression it can evaluate (env.NAME, github.workspace).
type resolver interface {
	variable(name string) (string, bool)
	expression(expr string) (string, bool)
}

// resolve returns the word's text with every part r knows filled in, and
// whether every part was known. An unknown part is left as raw writes it.
func (w word) resolve(r resolver) (string, bool) {
	var b strings.Builder
	known := true
	for _, p := range w.pieces {
		var v string
		ok := false
		switch p.kind {
		case pieceLit:
			v, ok = p.text, true
		case pieceVar:
			if r != nil {
				v, ok = r.variable(p.text)
			}
			if !ok {
				v = "${" + p.text + "}"
			}
		case pieceExpr:
			if r != nil {
				v, ok = r.expression(p.text)
			}
			if !ok {
				v = "${{ " + p.text + " }}"
			}
		case pieceDynam:
			v = p.text
		}
		known = known && ok
		b.WriteString(v)
	}
	return b.String(), known
}

// assignment is NAME=value before a command, or alone (a shell variable).
type assignment struct {
	name  string
	value word // the part after "="
}

// redirection is a redirection of a command: its operator and target.
type redirection struct {
	op     string // ">", ">>", "<", "<<", "&>", ...
	target word
}

// command is one simple command of a script.
type command struct {
	words   []word // the program and its arguments
	assigns []assignment
	redirs  []redirection
	line    int // the script's line (0-based) where it starts
	// op is what follows it: "&&", "||", "|", "|&", ";", "&", "\n", ")"
	// or "" at the end of the script.
	op string
	// prev is the operator before it ("" at the start of a list).
	prev string
	// negated: "! cmd". condition: the condition of if, elif, while or
	// until, whose failure the shell's -e ignores.
	negated, condition bool
}

// parseScript reads a script into its simple commands, in order.
func parseScript(src string) []command {
	lx := lexer{s: src}
	lx.run()
	return parseTokens(lx.toks)
}

// normalizeExpr writes a ${{ }} expression with single spaces, so the same
// expression written twice compares equal.
func normalizeExpr(s string) string { return strings.Join(strings.Fields(s), " ") }

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigitByte(c) }

func isShellName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// parseTokens groups tokens into simple commands.
func parseTokens(toks []token) []command {
	var cmds []command
	var cur command
	started := false // cur has begun: a word, an assignment or a redirection
	condition, negated, skipping := false, false, false
	prev := ""
	subshells := 0 // "(" not closed yet
	begin := func(line int) {
		if !started {
			cur.line, cur.prev, started = line, prev, true
		}
	}
	end := func(op string) {
		// ")" ends a subshell that "(" began; any other ")" ends a case
		// pattern, which is no command.
		switch {
		case op == "(":
			subshells++
		case op == ")" && subshells > 0:
			subshells--
		case op == ")":
			skipping = true
		}
		if started && !skipping {
			cur.op, cur.condition, cur.negated = op, condition, negated
			cmds = append(cmds, cur)
		}
		switch op {
		case "\n", ";", "&", ";;", "(", ")":
			prev = op
			if op != "(" {
				prev = ""
			}
		default:
			prev = op
		}
		cur, started, negated, skipping = command{}, false, false, false
	}
	for _, t := range toks {
		switch {
		case t.op != "":
			end(t.op)
		case t.redir != "":
			begin(t.line)
			cur.redirs = append(cur.redirs, redirection{op: t.redir, target: t.w})
		case skipping:
		case len(cur.words) > 0:
			cur.words = append(cur.words, t.w)
		default:
			if lit, ok := t.w.literal(); ok && !t.w.quoted {
				switch lit {
				case "if", "elif", "while", "until":
					condition = true
					continue
				case "then", "do":
					condition = false
					continue
				case "else", "fi", "done", "esac", "{", "}":
					continue
				case "!":
					negated = true
					continue
				case "for", "case", "select", "function":
					begin(t.line)
					skipping = true
					continue
				}
			}
			begin(t.line)
			if name, value, ok := splitAssignment(t.w); ok {
				cur.assigns = append(cur.assigns, assignment{name: name, value: value})
				continue
			}
			cur.line = t.line
			cur.words = append(cur.words, t.w)
		}
	}
	end("")
	return cmds
}

// splitAssignment reads NAME=value: the name must be literal and unquoted.
func splitAssignment(w word) (string, word, bool) {
	if len(w.pieces) == 0 || w.pieces[0].kind != pieceLit {
		return "", word{}, false
	}
	first := w.pieces[0].text
	eq := strings.IndexByte(first, '=')
	if eq <= 0 || !isShellName(first[:eq]) {
		return "", word{}, false
	}
	value := word{line: w.line, quoted: w.quoted}
	if rest := first[eq+1:]; rest != "" {
		value.pieces = append(value.pieces, piece{kind: pieceLit, text: rest})
	}
	value.pieces = append(value.pieces, w.pieces[1:]...)
	return first[:eq], value, true
}

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

type token struct {
	op    string // an operator; "" for a word or a redirection
	redir string // a redirection's operator, with w its target
	w     word
	line  int
}

type lexer struct {
	s        string
	i        int
	line     int
	heredocs []heredoc // here documents whose bodies start after the next newline
	toks     []token
}

type heredoc struct {
	delim     string
	stripTabs bool // <<-
}

func (lx *lexer) run() {
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.i++
		case c == '\\' && lx.i+1 < len(lx.s) && lx.s[lx.i+1] == '\n':
			lx.i += 2
			lx.line++
		case c == '\n':
			lx.emitOp("\n", 1)
			lx.line++
			lx.skipHeredocs()
		case c == '#':
			for lx.i < len(lx.s) && lx.s[lx.i] != '\n' {
				lx.i++
			}
		case c == ';':
			if lx.peek(";;") {
				lx.emitOp(";;", 2)
			} else {
				lx.emitOp(";", 1)
			}
		case c == '&':
			switch {
			case lx.peek("&&"):
				lx.emitOp("&&", 2)
			case lx.peek("&>>"):
				lx.redirect("&>>")
			case lx.peek("&>"):
				lx.redirect("&>")
			default:
				lx.emitOp("&", 1)
			}
		case c == '|':
			switch {
			case lx.peek("||"):
				lx.emitOp("||", 2)
			case lx.peek("|&"):
				lx.emitOp("|&", 2)
			default:
				lx.emitOp("|", 1)
			}
		case c == '(' || c == ')':
			lx.emitOp(string(c), 1)
		case c == '<' || c == '>':
			lx.redirect(lx.redirOp())
		case isDigitByte(c) && lx.fdRedirect():
			for isDigitByte(lx.s[lx.i]) {
				lx.i++
			}
			lx.redirect(lx.redirOp())
		default:
			w := lx.word()
			lx.toks = append(lx.toks, token{w: w, line: w.line})
		}
	}
}

func (lx *lexer) peek(s string) bool { return strings.HasPrefix(lx.s[lx.i:], s) }

func (lx *lexer) emitOp(op string, n int) {
	lx.toks = append(lx.toks, token{op: op, line: lx.line})
	lx.i += n
}

// fdRedirect: digits followed by < or >, as in 2>&1.
func (lx *lexer) fdRedirect() bool {
	j := lx.i
	for j < len(lx.s) && isDigitByte(lx.s[j]) {
		j++
	}
	return j < len(lx.s) && (lx.s[j] == '<' || lx.s[j] == '>')
}

// redirOp reads the redirection operator at lx.i, without consuming it.
func (lx *lexer) redirOp() string {
	for _, op := range []string{"<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">"} {
		if lx.peek(op) {
			return op
		}
	}
	return lx.s[lx.i : lx.i+1]
}

// redirect consumes the operator op at lx.i and its target word.
func (lx *lexer) redirect(op string) {
	line := lx.line
	lx.i += len(op)
	for lx.i < len(lx.s) && (lx.s[lx.i] == ' ' || lx.s[lx.i] == '\t') {
		lx.i++
	}
	var target word
	if lx.i < len(lx.s) && !strings.ContainsRune(" \t\r\n;&|()<>", rune(lx.s[lx.i])) {
		target = lx.word()
	}
	if op == "<<" || op == "<<-" {
		delim := target.raw()
		if lit, ok := target.literal(); ok {
			delim = lit
		}
		lx.heredocs = append(lx.heredocs, heredoc{delim: delim, stripTabs: op == "<<-"})
	}
	lx.toks = append(lx.toks, token{redir: op, w: target, line: line})
}

// skipHeredocs skips the bodies of the pending here documents, which start
// at lx.i, the line after the one that opened them.
func (lx *lexer) skipHeredocs() {
	for _, h := range lx.heredocs {
		for lx.i < len(lx.s) {
			end := strings.IndexByte(lx.s[lx.i:], '\n')
			var line string
			if end < 0 {
				line, lx.i = lx.s[lx.i:], len(lx.s)
			} else {
				line = lx.s[lx.i : lx.i+end]
				lx.i += end + 1
				lx.line++
			}
			line = strings.TrimSuffix(line, "\r")
			if h.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				break
			}
		}
	}
	lx.heredocs = nil
}

// word reads one word starting at lx.i.
func (lx *lexer) word() word {
	w := word{line: lx.line}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			w.pieces = append(w.pieces, piece{kind: pieceLit, text: lit.String()})
			lit.Reset()
		}
	}
	add := func(p piece) {
		flush()
		w.pieces = append(w.pieces, p)
	}
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch {
		case strings.IndexByte(" \t\r\n;&|()<>", c) >= 0:
			flush()
			return w
		case c == '\\':
			w.quoted = true
			if lx.i+1 < len(lx.s) {
				if lx.s[lx.i+1] == '\n' {
					lx.line++ // a line continuation inside a word joins it
				} else {
					lit.WriteByte(lx.s[lx.i+1])
				}
				lx.i += 2
			} else {
				lx.i++
			}
		case c == '\'':
			w.quoted = true
			end := strings.IndexByte(lx.s[lx.i+1:], '\'')
			if end < 0 {
				end = len(lx.s) - lx.i - 1
			}
			text := lx.s[lx.i+1 : lx.i+1+end]
			lx.line += strings.Count(text, "\n")
			lit.WriteString(text)
			lx.i += end + 2
		case c == '"':
			w.quoted = true
			lx.i++
			lx.doubleQuoted(&lit, add)
		case c == '$':
			if p, ok := lx.dollar(); ok {
				add(p)
			} else {
				lit.WriteByte('$')
				lx.i++
			}
		case c == '`':
			add(lx.backquoted())
		default:
			lit.WriteByte(c)
			lx.i++
		}
	}
	flush()
	return w
}

// doubleQuoted reads the inside of "..." after its opening quote.
func (lx *lexer) doubleQuoted(lit *strings.Builder, add func(piece)) {
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch {
		case c == '"':
			lx.i++
			return
		case c == '\\' && lx.i+1 < len(lx.s) && strings.IndexByte("$`\"\\\n", lx.s[lx.i+1]) >= 0:
			if lx.s[lx.i+1] == '\n' {
				lx.line++
			} else {
				lit.WriteByte(lx.s[lx.i+1])
			}
			lx.i += 2
		case c == '$':
			if p, ok := lx.dollar(); ok {
				add(p)
			} else {
				lit.WriteByte('$')
				lx.i++
			}
		case c == '`':
			add(lx.backquoted())
		default:
			if c == '\n' {
				lx.line++
			}
			lit.WriteByte(c)
			lx.i++
		}
	}
}

// dollar reads an expansion starting with the $ at lx.i. ok is false for a
// lone $, which is literal.
func (lx *lexer) dollar() (piece, bool) {
	rest := lx.s[lx.i:]
	switch {
	case strings.HasPrefix(rest, "${{"):
		end := strings.Index(rest, "}}")
		if end < 0 {
			lx.i = len(lx.s)
			return piece{kind: pieceDynam, text: rest}, true
		}
		lx.i += end + 2
		return piece{kind: pieceExpr, text: normalizeExpr(rest[3:end])}, true
	case strings.HasPrefix(rest, "${"):
		n := lx.balanced(lx.i+1, '{', '}')
		text := lx.s[lx.i:n]
		lx.i = n
		if body, ok := strings.CutSuffix(text[2:], "}"); ok && isShellName(body) {
			return piece{kind: pieceVar, text: body}, true
		}
		return piece{kind: pieceDynam, text: text}, true
	case strings.HasPrefix(rest, "$("):
		n := lx.balanced(lx.i+1, '(', ')')
		text := lx.s[lx.i:n]
		lx.i = n
		return piece{kind: pieceDynam, text: text}, true
	case len(rest) > 1 && (isNameStart(rest[1])):
		j := 2
		for j < len(rest) && isNameByte(rest[j]) {
			j++
		}
		lx.i += j
		return piece{kind: pieceVar, text: rest[1:j]}, true
	case len(rest) > 1 && strings.IndexByte("0123456789?@*#$!-", rest[1]) >= 0:
		lx.i += 2
		return piece{kind: pieceDynam, text: rest[:2]}, true
	}
	return piece{}, false
}

// balanced returns the index after the close that matches the open at
// start, skipping quoted text; the end of the script if none does.
func (lx *lexer) balanced(start int, open, close byte) int {
	depth := 0
	for j := start; j < len(lx.s); j++ {
		switch c := lx.s[j]; c {
		case '\n':
			lx.line++
		case '\\':
			j++
		case '\'':
			if k := strings.IndexByte(lx.s[j+1:], '\''); k >= 0 {
				lx.line += strings.Count(lx.s[j+1:j+1+k], "\n")
				j += k + 1
			}
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(lx.s)
}

func (lx *lexer) backquoted() piece {
	stop := len(lx.s)
	if end := strings.IndexByte(lx.s[lx.i+1:], '`'); end >= 0 {
		stop = lx.i + 1 + end + 1
	}
	text := lx.s[lx.i:stop]
	lx.line += strings.Count(text, "\n")
	lx.i = stop
	return piece{kind: pieceDynam, text: text}
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

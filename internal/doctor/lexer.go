package doctor

import "strings"

// The lexer of the shell reader (shell.go): a script's characters into words,
// operators and redirections, line by line, with here documents skipped.

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
		case c == '$' || c == '`':
			lx.expansion(&lit, add)
		default:
			lit.WriteByte(c)
			lx.i++
		}
	}
	flush()
	return w
}

// expansion reads the $... or `...` at lx.i, outside quotes or inside
// "...": a parameter or command substitution, or a "$" that starts none,
// which is literal.
func (lx *lexer) expansion(lit *strings.Builder, add func(piece)) {
	if lx.s[lx.i] == '`' {
		add(lx.backquoted())
		return
	}
	if p, ok := lx.dollar(); ok {
		add(p)
		return
	}
	lit.WriteByte('$')
	lx.i++
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
		case c == '$' || c == '`':
			lx.expansion(lit, add)
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

package canary

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A string for a schema's pattern, made from the expression's parse tree
// (regexp/syntax, the syntax Go's regexp and the schema validator read):
// literals, character classes, any character, concatenation, alternation
// (its first branch that can be made), groups, repetition within its
// bounds, and the anchors ^ $ \A \z. Anything else (a word boundary, an
// expression Go does not read, such as a look-ahead or a back-reference)
// is given up on, saying so: a smoke input is a plain one or none.

// maxPatternBytes bounds a pattern read: a longer one is not a simple
// shape of an identifier.
const maxPatternBytes = 1 << 10

// fromPattern is a string that matches pattern (anywhere, as JSON Schema
// reads a pattern: anchors say where), of minLen to maxLen characters:
// each repetition as few times as it may, and more while the string is
// shorter than minLen, or than generatedString (a key of one character is
// valid, but "mcpwatch" says in a server's log who called).
func fromPattern(pattern string, minLen, maxLen int) (string, error) {
	if len(pattern) > maxPatternBytes {
		return "", fmt.Errorf("longer than %d bytes", maxPatternBytes)
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("not an expression Go's regexp reads: %s", describeSyntaxError(err))
	}
	p := &patternGen{want: max(minLen, min(len(generatedString), maxLen), 1)}
	out, err := p.gen(re)
	if err != nil {
		return "", err
	}
	n := utf8.RuneCountInString(out)
	switch {
	case n < minLen:
		return "", fmt.Errorf("no match as long as minLength %d", minLen)
	case n > maxLen:
		return "", fmt.Errorf("its shortest match is longer than maxLength %d", maxLen)
	case !matches(pattern, out):
		return "", errors.New("what it makes does not match it")
	}
	return out, nil
}

// matches reports whether s matches pattern as Go's regexp reads it.
func matches(pattern, s string) bool {
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(s)
}

func describeSyntaxError(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s: %s", se.Code, quote(se.Expr))
	}
	return err.Error()
}

// patternGen makes one string. want is how many more characters to make
// by repeating: a repetition repeats beyond its minimum while want is
// positive.
type patternGen struct {
	want int
	// next is the position in generatedString of the next character a
	// class or "." prefers.
	next int
}

// maxRepeat bounds an unbounded repetition (x*, x+, x{2,}).
const maxRepeat = maxGeneratedLength

func (p *patternGen) gen(re *syntax.Regexp) (string, error) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return "", nil
	case syntax.OpLiteral:
		p.want -= len(re.Rune)
		return string(re.Rune), nil
	case syntax.OpCharClass:
		r, ok := p.pick(re.Rune)
		if !ok {
			return "", errors.New("a character class that holds no character")
		}
		p.want--
		return string(r), nil
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		r, _ := p.pick([]rune{0x20, 0x7e})
		p.want--
		return string(r), nil
	case syntax.OpCapture:
		return p.gen(re.Sub[0])
	case syntax.OpConcat:
		var b strings.Builder
		for _, sub := range re.Sub {
			s, err := p.gen(sub)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case syntax.OpAlternate:
		var first error
		for _, sub := range re.Sub {
			saved := *p
			s, err := p.gen(sub)
			if err == nil {
				return s, nil
			}
			*p, first = saved, cmpOr(first, err)
		}
		return "", first
	case syntax.OpStar:
		return p.repeat(re.Sub[0], 0, -1)
	case syntax.OpPlus:
		return p.repeat(re.Sub[0], 1, -1)
	case syntax.OpQuest:
		return p.repeat(re.Sub[0], 0, 1)
	case syntax.OpRepeat:
		return p.repeat(re.Sub[0], re.Min, re.Max)
	case syntax.OpNoMatch:
		return "", errors.New("it matches nothing")
	}
	return "", fmt.Errorf("%s is more than a generated input follows", opName(re))
}

// repeat makes sub at least lo times, and more, up to hi (-1: no bound),
// while the string wants characters.
func (p *patternGen) repeat(sub *syntax.Regexp, lo, hi int) (string, error) {
	if hi < 0 || hi > maxRepeat {
		hi = maxRepeat
	}
	if lo > maxRepeat {
		return "", fmt.Errorf("a repetition of at least %d", lo)
	}
	var b strings.Builder
	for n := 0; n < hi && (n < lo || p.want > 0); n++ {
		before := p.want
		s, err := p.gen(sub)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		if s == "" && before == p.want && n >= lo {
			break // an empty repetition makes nothing more
		}
	}
	return b.String(), nil
}

// pick is the character a class gives: the next of generatedString (or
// its capital) when the class holds it, else a digit from 1, else its
// first printable ASCII character, else its first character that is a
// graphic one. ranges are the class's [lo, hi] pairs.
func (p *patternGen) pick(ranges []rune) (rune, bool) {
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	pref := rune(generatedString[p.next%len(generatedString)])
	for _, r := range []rune{pref, unicode.ToUpper(pref)} {
		if in(r) {
			p.next++
			return r, true
		}
	}
	for _, r := range "1234567890" {
		if in(r) {
			return r, true
		}
	}
	for r := rune(0x21); r <= 0x7e; r++ {
		if in(r) {
			return r, true
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r-ranges[i] < 1<<16; r++ {
			if unicode.IsGraphic(r) && utf8.ValidRune(r) {
				return r, true
			}
		}
	}
	return 0, false
}

// opName words an operation of the parse tree that is given up on.
func opName(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpWordBoundary:
		return `a word boundary (\b)`
	case syntax.OpNoWordBoundary:
		return `a non-boundary (\B)`
	}
	return fmt.Sprintf("%q", re.String())
}

package glob

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompile: a forbid pattern compiles exactly when the syntax allows
// it, and matches exactly the names a plain reading of the syntax does
// (a matcher written apart from the regular-expression translation, here);
// an escaped name matches itself. make fuzz runs it for a while; go test
// runs the seeds.
func FuzzCompile(f *testing.F) {
	for _, s := range [][2]string{
		{"delete_*", "delete_/everything"}, {"*", ""}, {"?", "é"}, {"[a-z]*", "x1"}, {"[^a-z]", "A"},
		{"a\\*b", "a*b"}, {"[]]", "]"}, {"[^]]", "x"}, {"[\\]]", "]"}, {"[a-]", "-"}, {"[z-a]", "q"},
		{"[", "["}, {"\\", "\\"}, {"[a", "a"}, {"x\\", "x"}, {"*_write*", "file_write\n"}, {"[\\", ""},
		{"[^", "^"}, {"[a-\\]]", "]"}, {"get_*_by_id", "get__by_id"}, {"**?**", "ab"}, {"[\xff]", "\xff"},
		{"\xff", "\xff"}, {"(a|b)+.$^", "(a|b)+.$^"}, {"[.]", "a"}, {"[-a]", "-"}, {"a?c", "a\nc"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 200 || len(name) > 200 {
			t.Skip("the reference matcher is quadratic")
		}
		re, err := Compile(pattern)
		tokens, refErr := parse(pattern)
		if !utf8.ValidString(pattern) {
			return // YAML gives UTF-8; a byte that is not is refused or matched as U+FFFD
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Compile(%q): %v; the syntax says %v", pattern, err, refErr)
		}
		if err != nil {
			return
		}
		for _, n := range []string{name, pattern, escape(name)} {
			if got, want := re.MatchString(n), match(tokens, n); got != want {
				t.Fatalf("pattern %q on %q: matched %v, the syntax says %v (regexp %s)", pattern, n, got, want, re)
			}
		}
		if e := escape(name); name != "" && !mustMatch(t, e, name) {
			t.Fatalf("escaped %q as %q, which does not match it", name, e)
		}
	})
}

func mustMatch(t *testing.T, pattern, name string) bool {
	t.Helper()
	re, err := Compile(pattern)
	if err != nil {
		if utf8.ValidString(name) {
			t.Fatalf("Compile(%q): %v", pattern, err)
		}
		return true
	}
	return re.MatchString(name)
}

// escape makes a pattern that matches s alone.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteByte('\\')
		b.WriteRune(r)
	}
	return b.String()
}

// token is one element of a pattern, as the syntax reads it.
type token struct {
	kind   byte // '*', '?', 'c' (class) or 'l' (literal)
	lit    rune
	neg    bool
	ranges [][2]rune
}

// parse reads a pattern by the syntax the package documents.
func parse(p string) ([]token, error) {
	if p == "" {
		return nil, errSyntax("empty")
	}
	rs := []rune(p)
	var out []token
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '*':
			out = append(out, token{kind: '*'})
		case '?':
			out = append(out, token{kind: '?'})
		case '\\':
			if i+1 == len(rs) {
				return nil, errSyntax("trailing \\")
			}
			i++
			out = append(out, token{kind: 'l', lit: rs[i]})
		case '[':
			tok := token{kind: 'c'}
			i++
			if i < len(rs) && rs[i] == '^' {
				tok.neg = true
				i++
			}
			for {
				if i >= len(rs) {
					return nil, errSyntax("unclosed [")
				}
				if rs[i] == ']' && len(tok.ranges) > 0 {
					break
				}
				lo := rs[i]
				if lo == '\\' {
					if i+1 >= len(rs) {
						return nil, errSyntax("trailing \\ in a class")
					}
					i++
					lo = rs[i]
				}
				i++
				hi := lo
				if i+1 < len(rs) && rs[i] == '-' && rs[i+1] != ']' {
					i++
					hi = rs[i]
					if hi == '\\' && i+1 < len(rs) {
						i++
						hi = rs[i]
					}
					i++
					if hi < lo {
						return nil, errSyntax("range out of order")
					}
				}
				tok.ranges = append(tok.ranges, [2]rune{lo, hi})
			}
			out = append(out, tok)
		default:
			out = append(out, token{kind: 'l', lit: rs[i]})
		}
	}
	return out, nil
}

type errSyntax string

func (e errSyntax) Error() string { return string(e) }

// match reports whether tokens match the whole of name, by dynamic
// programming over (token, rune) positions. A byte that is not UTF-8 reads
// as U+FFFD, as Go's regexp reads it.
func match(tokens []token, name string) bool {
	var rs []rune
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		rs = append(rs, r)
		i += size
	}
	// can[j] is whether the tokens so far match rs[:j].
	can := make([]bool, len(rs)+1)
	can[0] = true
	for _, tok := range tokens {
		next := make([]bool, len(rs)+1)
		for j := range can {
			if !can[j] {
				continue
			}
			switch tok.kind {
			case '*':
				for k := j; k <= len(rs); k++ {
					next[k] = true
				}
			case '?':
				if j < len(rs) {
					next[j+1] = true
				}
			case 'l':
				if j < len(rs) && rs[j] == tok.lit {
					next[j+1] = true
				}
			case 'c':
				if j < len(rs) && inClass(tok, rs[j]) {
					next[j+1] = true
				}
			}
		}
		can = next
	}
	return can[len(rs)]
}

func inClass(tok token, r rune) bool {
	in := false
	for _, rg := range tok.ranges {
		if rg[0] <= r && r <= rg[1] {
			in = true
		}
	}
	return in != tok.neg
}

// FuzzEscape: an escaped name is a valid pattern that matches the name,
// whatever it holds (path.Match's escaping, checked by path.Match, let
// through names a forbid glob reads otherwise: "a/[b" is path.Match's
// error but a class to the glob).
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"delete_*", `a\b`, "x[y", "a/[b", "?", "]", "é*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || !utf8.ValidString(name) {
			return
		}
		re, err := Compile(Escape(name))
		if err != nil {
			t.Fatalf("Escape(%q) = %q: %v", name, Escape(name), err)
		}
		if !re.MatchString(name) {
			t.Fatalf("Escape(%q) = %q does not match it", name, Escape(name))
		}
	})
}

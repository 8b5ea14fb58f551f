// Package glob compiles the globs of forbid patterns on tool names.
package glob

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// A forbid pattern is a glob on tool names: "*" matches any run of
// characters, "/" included (tool names are not paths: with path.Match,
// "delete_*" let "delete_/everything" through), "?" any one character,
// "[abc]", "[a-z]" and "[^a-z]" one character of a class, and "\" makes the
// next character literal. It matches the whole name.
//
// It is run as a regular expression of Go's regexp package, whose time is
// linear in the name: no pattern makes matching backtrack.

// Check reports why pattern is not a valid forbid pattern, or nil.
func Check(pattern string) error {
	_, err := Compile(pattern)
	return err
}

// Escape returns the pattern that matches name and nothing else: every
// character a pattern reads ("*", "?", "[", "\\") is made literal with "\\".
// A name the configuration lists as a name, not a pattern (an imported
// client's forbidden tools), goes through it.
func Escape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var globs sync.Map // pattern -> *regexp.Regexp: patterns come from configuration, so the set is small

// Compile returns the regular expression of pattern, cached: patterns come
// from configuration, so the set is small.
func Compile(pattern string) (*regexp.Regexp, error) {
	if re, ok := globs.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	if pattern == "" {
		return nil, errors.New("an empty pattern matches no tool")
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pattern); {
		r, size := nextRune(pattern[i:])
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+size == len(pattern) {
				return nil, errors.New(`a trailing \ escapes nothing`)
			}
			_, n := nextRune(pattern[i+size:])
			b.WriteString(regexp.QuoteMeta(pattern[i+size : i+size+n]))
			size += n
		case '[':
			class, n, err := globClass(pattern[i:])
			if err != nil {
				return nil, err
			}
			b.WriteString(class)
			size = n
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+size]))
		}
		i += size
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("bad character class: %w", err)
	}
	globs.Store(pattern, re)
	return re, nil
}

// globClass translates the class at the start of p ("[a-z]", "[^xy]") and
// returns how many bytes of p it took.
func globClass(p string) (class string, n int, err error) {
	var b strings.Builder
	b.WriteString("[")
	i := 1
	if strings.HasPrefix(p[i:], "^") {
		b.WriteString("^")
		i++
	}
	members := 0
	for {
		if i >= len(p) {
			return "", 0, errors.New("a [ is never closed by ]")
		}
		r, size := nextRune(p[i:])
		if r == ']' && members > 0 {
			return b.String() + "]", i + size, nil
		}
		if r == '\\' {
			if i+size >= len(p) {
				return "", 0, errors.New(`a trailing \ escapes nothing`)
			}
			i += size
			r, size = nextRune(p[i:])
		}
		fmt.Fprintf(&b, `\x{%x}`, r)
		i += size
		members++
		if strings.HasPrefix(p[i:], "-") && i+1 < len(p) && p[i+1] != ']' {
			i++
			hi, size := nextRune(p[i:])
			if hi == '\\' && i+size < len(p) {
				i += size
				hi, size = nextRune(p[i:])
			}
			fmt.Fprintf(&b, `-\x{%x}`, hi)
			i += size
		}
	}
}

func nextRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

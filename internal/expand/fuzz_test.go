package expand

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// Fuzz targets for the ${...} expander, which reads every string of a
// configuration and of every imported client config, and for what config
// check prints of such strings. make fuzz runs each for a while; go test
// runs the seeds.

// fuzzValue is every set variable's value: a secret, which no error may
// quote.
const fuzzValue = "zq-VALUE-9x"

// fuzzLookup: names starting with U are unset, with E set but empty; every
// other name is set to fuzzValue.
func fuzzLookup(name string) (string, bool) {
	switch {
	case strings.HasPrefix(name, "U"), strings.HasPrefix(name, "MCPWATCH_INPUT_U"):
		return "", false
	case strings.HasPrefix(name, "E"):
		return "", true
	}
	return fuzzValue, true
}

var expandSeeds = []string{
	"", "plain", "$", "$$", "$${X}", "${X}", "${UNSET}", "${EMPTY:-d}", "${A:-${B:-c}}", "${env:TOKEN}",
	"${input:api-key}", "${input:U1}", "Bearer ${TOKEN}", "${USER}:${PASS}", "${", "${}", "${1A}", "${A:-",
	"${A:-${B}", "${A!}", "${TOKEN:-hardcoded-secret}", "a$b$$c${D}e", "${workspaceFolder}/x", "${file:${DIR}/t}",
	"${file:}", "${A:-}", "${ A }", "${A:-x}}", "$$$${A}", strings.Repeat("${A:-", 50) + "x" + strings.Repeat("}", 50),
}

// FuzzExpand: expansion never panics; its output is bounded by the input
// and the values looked up; $$ round-trips any text; an error is an
// Error of its kinds that never quotes a value.
func FuzzExpand(f *testing.F) {
	for _, s := range expandSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, parseErr := parse(s)
		// Escaped, any text is itself.
		if got, err := Expand(strings.ReplaceAll(s, "$", "$$"), fuzzLookup); err != nil || got != s {
			t.Fatalf("Expand(escaped %q) = %q, %v", s, got, err)
		}
		if parseErr == nil && readsFiles(tmpl) {
			return // the fuzzer does not get to read the machine's files
		}
		x := Expander{Lookup: fuzzLookup, Workspace: "/w"}
		out, err := x.Expand(s)
		if (parseErr == nil) != (err == nil || !errors.Is(err, ErrSyntax)) {
			t.Fatalf("parse error %v, expand error %v", parseErr, err)
		}
		if err != nil {
			var xe *Error
			if !errors.As(err, &xe) || !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsetVariable) {
				t.Fatalf("error %T %v: not an Error of syntax or an unset variable", err, err)
			}
			if strings.Contains(err.Error(), fuzzValue) {
				t.Fatalf("the error quotes a value: %v", err)
			}
			return
		}
		// Each reference gives one value or its default, which is text of s.
		refs := strings.Count(s, "${")
		if bound := len(s) + refs*(len(fuzzValue)+len("/w")); len(out) > bound {
			t.Fatalf("%d bytes out of %d in with %d references (bound %d)", len(out), len(s), refs, bound)
		}
		if !strings.Contains(s, "$") && out != s {
			t.Fatalf("Expand(%q) = %q: text without $ changed", s, out)
		}
	})
}

// readsFiles reports whether t holds a ${file:...} reference.
func readsFiles(t template) bool {
	for _, p := range t {
		switch {
		case p.kind == refFile:
			return true
		case p.def != nil && readsFiles(*p.def):
			return true
		}
	}
	return false
}

// FuzzRedactValue: what config check prints of an env or header value is
// empty, <redacted>, or references only: no literal text but an auth
// scheme word and punctuation between references, and a default holding
// literal text printed as <redacted>.
func FuzzRedactValue(f *testing.F) {
	for _, s := range expandSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactValue(s)
		switch {
		case s == "" && out == "":
			return
		case s == "" || out == "":
			t.Fatalf("RedactValue(%q) = %q", s, out)
		case out == Redacted:
			return
		}
		tmpl, err := parse(out)
		if err != nil {
			t.Fatalf("RedactValue(%q) = %q, which does not parse: %v", s, out, err)
		}
		if !pureReference(tmpl) {
			t.Fatalf("RedactValue(%q) = %q: literal text shown", s, out)
		}
		if lit := literalDefault(tmpl); lit != "" {
			t.Fatalf("RedactValue(%q) = %q: a default's literal %q shown", s, out, lit)
		}
	})
}

// literalDefault returns literal text in a default of t other than
// Redacted itself, or "".
func literalDefault(t template) string {
	for _, p := range t {
		if p.kind != refVar || p.def == nil {
			continue
		}
		def := *p.def
		if len(def) == 1 && def[0].kind == refLiteral && def[0].text == Redacted {
			continue
		}
		for _, d := range def {
			if d.kind == refLiteral && d.text != "" {
				return d.text
			}
		}
		if lit := literalDefault(def); lit != "" {
			return lit
		}
	}
	return ""
}

// FuzzRedactArgs: the value after a flag whose name says credential, as
// the next argument or after "=", is never printed unless it is a pure
// reference, a URL (redacted by the URL rules) or text of the flag's own
// name.
func FuzzRedactArgs(f *testing.F) {
	for _, s := range []struct{ name, value string }{
		{"token", "hunter22"}, {"key", "hunter22"}, {"session", "s3cr3tval"}, {"pin", "4821"}, {"api-key", "${KEY}"},
		{"port", "8080"}, {"password", "Bearer ${T}"}, {"apiKey", "https://u:p@h.example/x?k=v"}, {"auth", ""},
	} {
		f.Add(s.name, s.value)
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		flag := "--" + name
		if strings.Contains(name, "=") || strings.HasPrefix(value, "-") || value == "" ||
			strings.HasPrefix(value, "http://") || strings.HasPrefix(value, "https://") {
			return // a URL is shown by the URL rules (FuzzRedactURL in internal/util/secret)
		}
		tmpl, err := parse(value)
		pure := err == nil && pureReference(tmpl)
		if !secret.IsCredentialName(flag) || pure || strings.Contains(flag, value) || strings.Contains(Redacted, value) {
			return
		}
		if out := RedactArgs([]string{flag, value}); len(out) != 2 || strings.Contains(out[1], value) {
			t.Fatalf("RedactArgs(%q, %q) = %q: the credential is shown", flag, value, out)
		}
		if out := RedactArgs([]string{flag + "=" + value}); len(out) != 1 || strings.Contains(strings.TrimPrefix(out[0], flag+"="), value) {
			t.Fatalf("RedactArgs(%q) = %q: the credential is shown", flag+"="+value, out)
		}
	})
}

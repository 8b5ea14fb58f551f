package expand

// What printing a server shows (config check, the status page, reports):
//
//   - env and header values: "<redacted>", unless the value is a pure
//     reference, shown as written: "${TOKEN}", "${file:/run/secrets/token}",
//     "Bearer ${TOKEN}" (an auth scheme word before references), "${A}:${B}"
//     (references joined by punctuation). A reference names where a secret
//     lives, not the secret, and seeing it is how a person debugs the wiring.
//     A literal default is a secret written in the file: "${TOKEN:-<redacted>}".
//   - URLs: by secret.RedactURL (userinfo, query values, the fragment and
//     key-like path segments redacted), references shown as written.
//   - args: shown, except what secret.ArgSecrets names (the value of a
//     flag whose name says credential: --token=..., --api-key ..., --key
//     ..., --pin ..., --session=...; an argument that looks like a key;
//     the secret parts of a URL), the rule the scrubber uses too. This is
//     a heuristic: put secrets in env, where they are always redacted.
//   - command, cwd, ca_file, schedule, forbid: shown as written.
//
// Each value is parsed once (parse), and redacted from what it parsed.

import (
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// Redacted is what a secret is printed as (secret.Redacted).
const Redacted = secret.Redacted

// RedactValue returns an env or header value as it may be printed: as
// written when it is a pure reference, else Redacted.
func RedactValue(v string) string {
	if v == "" {
		return ""
	}
	t, err := parse(v)
	if err != nil {
		return Redacted
	}
	return t.redacted()
}

// redacted is a parsed value as RedactValue prints it.
func (t template) redacted() string {
	if !pureReference(t) {
		return Redacted
	}
	var b strings.Builder
	for _, p := range t {
		if p.kind == refLiteral {
			b.WriteString(p.text)
		} else {
			b.WriteString(renderRef(p))
		}
	}
	return b.String()
}

// pureReference: at least one reference; literal text only as a leading
// auth scheme ("Bearer ") or as punctuation between references.
func pureReference(t template) bool {
	refs := 0
	for i, p := range t {
		if p.kind != refLiteral {
			refs++
			continue
		}
		if i == 0 && isSchemePrefix(p.text) || isPunctuation(p.text) {
			continue
		}
		return false
	}
	return refs > 0
}

func isSchemePrefix(s string) bool {
	word, ok := strings.CutSuffix(s, " ")
	if !ok || word == "" || len(word) > 20 {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

func isPunctuation(s string) bool {
	return len(s) <= 3 && strings.Trim(s, ":/@-_., ;|=") == ""
}

// renderRef prints a reference as written, but a default holding literal
// text is a secret written in the file.
func renderRef(p part) string {
	if p.kind == refVar && p.def != nil && hasLiteral(*p.def) {
		return p.head + ":-" + Redacted + "}"
	}
	return p.raw
}

func hasLiteral(t template) bool {
	for _, p := range t {
		switch {
		case p.kind == refLiteral && p.text != "":
			return true
		case p.kind == refVar && p.def != nil && hasLiteral(*p.def):
			return true
		}
	}
	return false
}

// RedactURL returns a URL as it may be printed: secret.RedactURL, with
// its ${...} references shown as written (a literal default of one is
// redacted by the same rules).
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	t, err := parse(raw)
	if err != nil {
		return Redacted
	}
	return t.redactedURL()
}

// redactedURL is a parsed URL as RedactURL prints it.
func (t template) redactedURL() string {
	// References cannot go through url.Parse ("${" is not valid in a host),
	// so each stands in as a placeholder and is put back afterwards.
	var b strings.Builder
	refs := map[string]string{}
	for i, p := range t {
		if p.kind == refLiteral {
			b.WriteString(p.text)
			continue
		}
		ph := fmt.Sprintf("mcpwatchref%dx", i)
		refs[ph] = renderRef(p)
		if p.kind == refVar && p.def != nil && hasLiteral(*p.def) {
			// A default URL is redacted by the URL rules, not wholesale.
			refs[ph] = p.head + ":-" + p.def.redactedURL() + "}"
		}
		b.WriteString(ph)
	}
	s := secret.RedactURL(b.String(), func(part string) bool { _, isRef := refs[part]; return isRef })
	for ph, ref := range refs {
		s = strings.ReplaceAll(s, ph, ref)
	}
	return s
}

// RedactArgs returns a server's arguments as they may be printed: the
// spans secret.ArgSecrets names (the rule the scrubber uses too) become
// "<redacted>", or stay as written where they are a pure ${...} reference.
func RedactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		// A literal default in a reference is a secret written in the file,
		// wherever it stands.
		if t, err := parse(a); err == nil && pureReference(t) {
			out[i] = t.redacted()
		} else {
			out[i] = a
		}
	}
	spans := secret.ArgSecrets(args)
	for i := 0; i < len(spans); {
		j := i
		var inArg []secret.Span
		for ; j < len(spans) && spans[j].Arg == spans[i].Arg; j++ {
			inArg = append(inArg, spans[j].Span)
		}
		a := spans[i].Arg
		out[a] = secret.Replace(args[a], inArg, redactPart)
		i = j
	}
	return out
}

// redactPart is a secret part of an argument or a URL as it may be
// printed: a pure reference as written (RedactValue), anything else
// Redacted.
func redactPart(part string) string {
	if strings.Contains(part, "${") {
		return RedactValue(part)
	}
	return Redacted
}

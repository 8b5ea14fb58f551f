// Package secret holds mcpwatch's rules for what a credential is: which
// names (env variables, HTTP headers, command-line flags) hold one, which
// values look like one, and how a URL is printed without the credentials
// it may carry. Redaction (what mcpwatch prints of a configuration) and
// scrubbing (what it keeps of what a server says) both decide by these
// rules, so the two cannot disagree.
//
// It imports nothing of ours, so any package may use it, the probe
// included.
package secret

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted is what a secret is printed as.
const Redacted = "<redacted>"

// IsCredentialName reports whether a name says the value configured under
// it is a credential: an env variable (GITHUB_TOKEN, DB_PASSWORD,
// REPORT_PIN), an HTTP header (Authorization, X-Api-Key, Cookie) or a
// command-line flag (--token, --api-key, --session=..., --key). Leading
// dashes are ignored.
//
// The name is cut into words at anything but a letter or a digit and
// where camelCase turns a word ("apiKey", "X-Api-Key", "API_KEY" all give
// "key"). It is a credential name when a word
//
//   - holds token, secret, passw(ord), passphrase, passcode, credential,
//     cookie, session, bearer, apikey, or auth (authorization, oauth,
//     auth_token; but not author), or
//   - is one of key, keys, pass, pwd, pin, pat, jwt, otp, creds.
//
// The short words count only whole, so that PATH, MONKEY, KEYBOARD and
// PING are not credentials. The rule errs towards credential: a value
// wrongly called one is only redacted in what mcpwatch prints, while a
// credential wrongly called a setting would be shown.
func IsCredentialName(name string) bool {
	for _, w := range words(name) {
		if credentialWord(w) {
			return true
		}
	}
	return false
}

// credentialWord applies the rule above to one lower-case word.
func credentialWord(w string) bool {
	switch w {
	case "key", "keys", "pass", "pwd", "pin", "pat", "jwt", "otp", "creds":
		return true
	}
	for _, part := range []string{"token", "secret", "passw", "passphrase", "passcode", "credential", "cookie", "session", "bearer", "apikey"} {
		if strings.Contains(w, part) {
			return true
		}
	}
	if i := strings.Index(w, "auth"); i >= 0 {
		// author, authors, authority: not credentials; authorization,
		// authz, oauth, authtoken: credentials.
		rest := w[i:]
		return !strings.HasPrefix(rest, "author") || strings.HasPrefix(rest, "authoriz")
	}
	return false
}

// words cuts a name into its lower-case words (Words).
func words(name string) []string {
	var out []string
	for start, end := range Words(name) {
		out = append(out, strings.ToLower(name[start:end]))
	}
	return out
}

// Words yields where each word of s starts and ends (in bytes): the one
// way mcpwatch cuts a name or a text into words, for a credential's name
// here and for a rejection's words in what a server answers. A word is a
// run of letters and digits of any script, cut again
//
//   - before an upper-case letter that follows a lower-case one or a digit
//     ("apiKey", "API2Key" -> api key, api2 key),
//   - before the last of a run of upper-case letters followed by a
//     lower-case one ("APIKey" -> API Key), and
//   - where a letter of a script without case (Han, Kana, Thai) meets a
//     letter with case or a digit ("token无效" -> token 无效), since those
//     scripts put no space between words.
func Words(s string) iter.Seq2[int, int] {
	return func(yield func(start, end int) bool) {
		start := -1
		var prev rune
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				if start >= 0 && !yield(start, i) {
					return
				}
				start = -1
				i += n
				continue
			}
			if start >= 0 && wordStarts(prev, r, s[i+n:]) {
				if !yield(start, i) {
					return
				}
				start = -1
			}
			if start < 0 {
				start = i
			}
			prev = r
			i += n
		}
		if start >= 0 {
			yield(start, len(s))
		}
	}
}

// wordStarts reports whether r, after prev in the same run of letters and
// digits and followed by rest, starts a word of its own.
func wordStarts(prev, r rune, rest string) bool {
	if caseless(prev) != caseless(r) {
		return true
	}
	if !unicode.IsUpper(r) {
		return false
	}
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsUpper(prev) && unicode.IsLower(next)
}

// caseless: a letter of a script without upper and lower case.
func caseless(r rune) bool {
	return unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsLower(r) && !unicode.IsTitle(r)
}

// LooksLikeKey reports whether a value looks like a credential by itself,
// whatever it is configured under: a well-known provider key prefix
// followed by at least 8 characters (sk-, ghp_, github_pat_, xoxb-,
// glpat-, AKIA, ...), or 24 characters or more mixing letters and digits
// with no "/" or "." (a generated key, unlike a word or a path).
func LooksLikeKey(v string) bool {
	for _, p := range []string{"sk-", "sk_", "ghp_", "gho_", "ghu_", "ghs_", "github_pat_", "xoxb-", "xoxp-", "glpat-", "AKIA"} {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return true
		}
	}
	if len(v) < 24 || strings.ContainsAny(v, "/.") {
		return false
	}
	var letters, digits bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case '0' <= c && c <= '9':
			digits = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters = true
		}
	}
	return letters && digits
}

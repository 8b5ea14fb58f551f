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
	"strings"
	"unicode"
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

// words cuts a name into lower-case words: at every rune that is not a
// letter or a digit, before an upper-case letter that follows a lower-case
// one or a digit ("apiKey" -> api key), and before the last of a run of
// upper-case letters followed by a lower-case one ("APIKey" -> api key).
func words(name string) []string {
	var out []string
	rs := []rune(name)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
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

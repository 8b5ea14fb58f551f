package secret

import "strings"

// Span is a secret inside a text (an argument, a URL): its bytes
// [Start, End), the name it is given under, and whether that name says
// credential.
type Span struct {
	Start, End int
	// Name says what the secret is: a flag as written ("--api-key"),
	// "userinfo" for a URL's user:password, a query key ("api_key"),
	// "fragment", or "" for a value that only looks like a key.
	Name string
	// Credential is set when the name says credential (a credential-named
	// flag or query key, a URL's userinfo): the value is a credential
	// however short, a ${...} reference in it that expands to nothing is a
	// missing credential, and a rejection names it. A value that only
	// looks like a key, or a query value under another name, is a secret
	// but no named credential.
	Credential bool
}

// ArgSpan is a Span in one argument of a list.
type ArgSpan struct {
	Arg int // the argument's index
	Span
}

// ArgSecrets finds the secrets an argument list carries. It is the one
// rule for them: config check's redaction replaces exactly these spans,
// and the scrubber looks for exactly these values in what a server says.
//
//   - the value of a flag whose name says credential (IsCredentialName):
//     "--api-key VALUE", "--token=VALUE", "--password", "--secret",
//     "--access-token", "--key", "--session=...";
//   - in an argument that is a URL (scheme://...), or a flag's value that
//     is one ("--db=postgresql://u:pw@h/db"), the parts URLSecrets names;
//   - an argument, or a flag's value, that looks like a key (LooksLikeKey).
//
// The list may hold ${...} references; a span then covers the reference
// as written (callers show or expand it).
func ArgSecrets(args []string) []ArgSpan {
	var out []ArgSpan
	add := func(i, offset int, spans ...Span) {
		for _, s := range spans {
			s.Start += offset
			s.End += offset
			out = append(out, ArgSpan{Arg: i, Span: s})
		}
	}
	flagBefore := ""
	for i, a := range args {
		switch {
		case a == "":
		case flagBefore != "":
			add(i, 0, Span{End: len(a), Name: flagBefore, Credential: true})
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			name, value, _ := strings.Cut(a, "=")
			offset := len(name) + 1
			switch {
			case value == "":
			case IsURL(value):
				add(i, offset, URLSecrets(value)...)
			case IsCredentialName(name):
				add(i, offset, Span{End: len(value), Name: name, Credential: true})
			case LooksLikeKey(value):
				add(i, offset, Span{End: len(value)})
			}
		case IsURL(a):
			add(i, 0, URLSecrets(a)...)
		case !strings.HasPrefix(a, "-") && LooksLikeKey(a):
			add(i, 0, Span{End: len(a)})
		}
		flagBefore = ""
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && IsCredentialName(a) {
			flagBefore = a
		}
	}
	return out
}

// IsURL reports whether an argument is a URL with an authority
// ("https://...", "postgresql://..."): a scheme of a letter then letters,
// digits, "+", "-" or ".", and "://".
func IsURL(a string) bool {
	scheme, _, ok := strings.Cut(a, "://")
	if !ok || scheme == "" || !isLetter(scheme[0]) {
		return false
	}
	for i := 1; i < len(scheme); i++ {
		c := scheme[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// URLSecrets finds the secret parts of a URL, read as written (it may hold
// ${...} references, which url.Parse would refuse):
//
//   - the userinfo ("user:password@"), a credential;
//   - every non-empty query value, a credential when its key says so
//     ("api_key=", "token=", "access_token="), and a query part without
//     "=" that looks like a key;
//   - a path segment that looks like a key (some hosted servers put their
//     key in the path: /s/NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5/mcp);
//   - the fragment.
//
// The spans are in order and do not overlap.
func URLSecrets(raw string) []Span {
	var out []Span
	rest := 0
	if scheme, _, ok := strings.Cut(raw, "://"); ok && IsURL(raw) {
		rest = len(scheme) + 3
		authEnd := len(raw)
		if j := strings.IndexAny(raw[rest:], "/?#"); j >= 0 {
			authEnd = rest + j
		}
		if at := strings.LastIndexByte(raw[rest:authEnd], '@'); at > 0 {
			out = append(out, Span{Start: rest, End: rest + at, Name: "userinfo", Credential: true})
		}
		rest = authEnd
	}
	end := len(raw)
	fragment := strings.IndexByte(raw[rest:], '#')
	if fragment >= 0 {
		end = rest + fragment
	}
	pathEnd := end
	if q := strings.IndexByte(raw[rest:end], '?'); q >= 0 {
		pathEnd = rest + q
	}
	for at := rest; at < pathEnd; {
		segEnd := pathEnd
		if j := strings.IndexByte(raw[at:pathEnd], '/'); j >= 0 {
			segEnd = at + j
		}
		if LooksLikeKey(raw[at:segEnd]) {
			out = append(out, Span{Start: at, End: segEnd})
		}
		at = segEnd + 1
	}
	for at := pathEnd + 1; at < end; {
		pairEnd := end
		if j := strings.IndexByte(raw[at:end], '&'); j >= 0 {
			pairEnd = at + j
		}
		pair := raw[at:pairEnd]
		k, v, hasValue := strings.Cut(pair, "=")
		switch {
		case hasValue && v != "":
			out = append(out, Span{Start: at + len(k) + 1, End: pairEnd, Name: k, Credential: IsCredentialName(k)})
		case !hasValue && LooksLikeKey(k):
			out = append(out, Span{Start: at, End: pairEnd})
		}
		at = pairEnd + 1
	}
	if fragment >= 0 && end+1 < len(raw) {
		out = append(out, Span{Start: end + 1, End: len(raw), Name: "fragment"})
	}
	return out
}

// Replace returns text with each span replaced by what with gives for the
// span's text. The spans are in order and do not overlap.
func Replace(text string, spans []Span, with func(part string) string) string {
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.Start])
		b.WriteString(with(text[s.Start:s.End]))
		last = s.End
	}
	b.WriteString(text[last:])
	return b.String()
}

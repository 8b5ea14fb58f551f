package secret

import (
	"net/url"
	"strings"
)

// RedactURL returns a URL as it may be printed (a configuration shown by
// config check, an error naming the endpoint a probe went to): the
// scheme, host and path as written, but
//
//   - userinfo ("user:password@") becomes "<redacted>@",
//   - every query value becomes "<redacted>" ("?api_key=<redacted>&mode=<redacted>"),
//     and a query part without "=" that looks like a key (LooksLikeKey),
//   - the fragment becomes "#<redacted>",
//   - a path segment that looks like a key (some hosted servers put one
//     in the path: /s/NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5/mcp) becomes "<redacted>".
//
// A URL that does not parse is Redacted as a whole. keep, when not nil,
// names the parts (path segments, query values) to show as written
// whatever they look like: the configuration uses it for its ${...}
// references, which name where a secret lives rather than hold one.
func RedactURL(raw string, keep func(part string) bool) string {
	if raw == "" {
		return ""
	}
	kept := func(part string) bool { return keep != nil && keep(part) }
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return Redacted
	}
	var out strings.Builder
	if u.Scheme != "" {
		out.WriteString(u.Scheme + "://")
	}
	if u.User != nil {
		out.WriteString(Redacted + "@")
	}
	out.WriteString(u.Host)
	segments := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segments {
		if !kept(seg) && LooksLikeKey(seg) {
			segments[i] = Redacted
		}
	}
	out.WriteString(strings.Join(segments, "/"))
	if u.RawQuery != "" {
		pairs := strings.Split(u.RawQuery, "&")
		for i, pair := range pairs {
			k, v, hasValue := strings.Cut(pair, "=")
			switch {
			case hasValue && v != "" && !kept(v):
				pairs[i] = k + "=" + Redacted
			case !hasValue && !kept(k) && LooksLikeKey(k):
				pairs[i] = Redacted
			}
		}
		out.WriteString("?" + strings.Join(pairs, "&"))
	}
	if u.Fragment != "" {
		out.WriteString("#" + Redacted)
	}
	return out.String()
}

// URLHasPassword reports whether raw is a URL that carries a password in
// its userinfo ("postgresql://user:password@host/db"), as database servers
// take their credential on the command line.
func URLHasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return false
	}
	p, ok := u.User.Password()
	return ok && p != ""
}

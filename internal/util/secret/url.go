package secret

import "net/url"

// RedactURL returns a URL as it may be printed (a configuration shown by
// config check, an error naming the endpoint a probe went to): as written,
// but every part URLSecrets names becomes "<redacted>"
// ("https://<redacted>@h/mcp?api_key=<redacted>&mode=<redacted>#<redacted>").
//
// A URL that does not parse is Redacted as a whole. keep, when not nil,
// names the parts (path segments, query values) to show as written
// whatever they look like: the configuration uses it for its ${...}
// references, which name where a secret lives rather than hold one.
func RedactURL(raw string, keep func(part string) bool) string {
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err != nil || u.Opaque != "" {
		return Redacted
	}
	return Replace(raw, URLSecrets(raw), func(part string) string {
		if keep != nil && keep(part) {
			return part
		}
		return Redacted
	})
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

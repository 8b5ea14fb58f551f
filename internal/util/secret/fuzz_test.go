package secret

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedactURL: whatever a URL's parts hold, its password, query values
// and fragment never show in what RedactURL prints, and it never panics on
// any text. make fuzz runs it for a while; go test runs the seeds.
func FuzzRedactURL(f *testing.F) {
	f.Add("/mcp", "user", "hunter22", "api_key", "k-123", "frag", "https://h.example/x?k=v#f")
	f.Add("/s/NjY4YzQ1ZTAtMmQ5Zi00YzRmLWI5/mcp", "", "", "", "", "", "not a url")
	f.Add("/a b/%zz", "u@x", "p:w", "a&b", "c=d", "#", "http://[::1]:8080/mcp?x")
	f.Add("", "", "pw", "k", "", "", "://")
	f.Fuzz(func(t *testing.T, path, user, pass, key, value, fragment, raw string) {
		_ = RedactURL(raw, nil) // any text: no panic
		u := url.URL{Scheme: "https", Host: "h.example", Path: path, Fragment: fragment}
		if pass != "" {
			u.User = url.UserPassword(user, pass)
		}
		if key != "" || value != "" {
			u.RawQuery = url.Values{key: {value}}.Encode()
		}
		out := RedactURL(u.String(), nil)
		shownAnyway := u.Scheme + "://" + u.Host + u.EscapedPath() + "?" + url.QueryEscape(key) + Redacted
		for what, s := range map[string]string{"password": pass, "query value": value, "fragment": fragment} {
			for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
				if len(form) >= 3 && strings.Contains(out, form) && !strings.Contains(shownAnyway, form) {
					t.Fatalf("RedactURL(%q) = %q shows the %s %q", u.String(), out, what, s)
				}
			}
		}
	})
}

// FuzzIsCredentialName: the rule reads words, so the separators between
// them and leading dashes do not change its answer.
func FuzzIsCredentialName(f *testing.F) {
	for _, s := range []string{"GITHUB_TOKEN", "X-Api-Key", "--api-key", "apiKey", "AUTHOR", "PATH", "é_KEY", "pin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := IsCredentialName(name)
		for _, variant := range []string{
			"--" + name,
			strings.ReplaceAll(name, "_", "-"),
			strings.ReplaceAll(name, "-", "_"),
			"x_" + name + "_x",
		} {
			if got := IsCredentialName(variant); got != want {
				t.Fatalf("IsCredentialName(%q) = %v, but %v for %q", variant, got, want, name)
			}
		}
	})
}

package credential

import (
	"slices"
	"testing"
)

// An answer's text is cut into words as a credential's name is
// (secret.IsCredentialName): at anything but a letter or a digit, where a
// lower-case letter or a digit meets an upper-case one, and before the last
// of a run of capitals followed by a lower-case letter, in every script.
// A letter of a script without case (Han, Kana) meeting one with case or a
// digit starts a word too, so "token无效" still names the token.
func TestWordsSplitAsCredentialNamesDo(t *testing.T) {
	for in, want := range map[string][]string{
		"API2Key":                    {"api2", "key"},
		"tokenÜber":                  {"token", "über"},
		"InvalidClientTokenId":       {"invalid", "client", "token", "id"},
		"JWSInvalidSignature":        {"jws", "invalid", "signature"},
		"SUBSCRIPTION_TOKEN_INVALID": {"subscription", "token", "invalid"},
		"re-authorize":               {"re", "authorize"},
		"HTTP401 Unauthorized":       {"http401", "unauthorized"},
		"token无效":                    {"token", "无效"},
		"无效的token":                   {"无效的", "token"},
		"api.example.com 1.1":        {"api", "example", "com", "1", "1"},
		"bad\xffkey":                 {"bad", "key"},
	} {
		var got []string
		for _, w := range words(in) {
			got = append(got, w.w)
		}
		if !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

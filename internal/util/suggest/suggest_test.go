package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"check", "lock", "probe", "login", "config", "doctor", "discover", "serve", "version"}
	flags := []string{"strict", "web.listen-address", "config.file", "ca_file"}
	for _, tc := range []struct {
		s    string
		list []string
		want string
	}{
		{"checkk", commands, "check"},
		{"chekc", commands, "check"},
		{"serv", commands, "serve"},
		{"stirct", flags, "strict"},
		{"web.listen-adress", flags, "web.listen-address"}, //nolint:misspell // a typo on purpose
		{"ca", flags, "ca_file"},
		{"deploy", commands, ""},         // another word
		{"x", commands, ""},              // too short to be a prefix, too far to be a slip
		{"", commands, ""},               // nothing typed
		{"verbose", flags, ""},           // nowhere near
		{"versoin", commands, "version"}, //nolint:misspell // a typo on purpose
	} {
		if got := Closest(tc.s, tc.list); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

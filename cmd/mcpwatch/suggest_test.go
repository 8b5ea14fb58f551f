package main

import (
	"strings"
	"testing"
)

// A mistyped command or flag is a usage error that names what was likely
// meant; -v and --version print the version.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"checkk"}, `unknown command "checkk" (did you mean check?)`},
		{[]string{"--versoin"}, `unknown command "--versoin" (did you mean --version?)`}, //nolint:misspell // a typo on purpose
		{[]string{"check", "--stirct"}, "unknown flag: --stirct (did you mean --strict?)\nRun 'mcpwatch check --help' for usage."},
		{[]string{"serve", "--web.listen-adress=127.0.0.1:0"}, "unknown flag: --web.listen-adress (did you mean --web.listen-address?)"}, //nolint:misspell // a typo on purpose
		{[]string{"lock", "--lock.fiel", "x"}, "unknown flag: --lock.fiel (did you mean --lock.file?)"},
	} {
		code, stdout, stderr := runCLI(t, nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("mcpwatch %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, exitUsage, tc.want)
		}
	}
	// Nothing near: no guess.
	for _, args := range [][]string{{"deploy"}, {"check", "--verbose"}} {
		if _, _, stderr := runCLI(t, nil, args...); strings.Contains(stderr, "did you mean") {
			t.Errorf("mcpwatch %s guessed: %q", strings.Join(args, " "), stderr)
		}
	}
	for _, flag := range []string{"-v", "--version"} {
		code, stdout, _ := runCLI(t, nil, flag)
		if code != exitOK || !strings.HasPrefix(stdout, "mcpwatch, version ") {
			t.Errorf("mcpwatch %s: exit %d, %q", flag, code, stdout)
		}
	}
}

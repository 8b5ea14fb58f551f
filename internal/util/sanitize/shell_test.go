package sanitize

import (
	"os/exec"
	"testing"
)

// What ShellQuote makes of a word, a POSIX shell reads back as that word.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"db":              "db",
		"":                "''",
		"db prod":         "'db prod'",
		"$HOME":           "'$HOME'",
		"it's":            `'it'\''s'`,
		"a`id`b":          "'a`id`b'",
		"--api-key=x/y.z": "--api-key=x/y.z",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
		sh, err := exec.LookPath("sh")
		if err != nil {
			continue
		}
		out, err := exec.Command(sh, "-c", "printf %s "+ShellQuote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh read %s back as %q (%v), want %q", ShellQuote(in), out, err, in)
		}
	}
}

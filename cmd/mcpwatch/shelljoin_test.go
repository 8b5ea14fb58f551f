package main

import "testing"

// config check's command line pastes back into a shell: a $ is quoted so
// the shell does not expand it (strconv.Quote's double quotes did not
// stop it), and a redacted value stays a placeholder.
func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"npx", "-y", "pkg", "--root", "$HOME/x y", "--api-key", "<redacted>", ""})
	if want := `npx -y pkg --root '$HOME/x y' --api-key <redacted> ''`; got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}

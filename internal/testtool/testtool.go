// Package testtool holds what tests of several packages share: it finds the
// programs some tests run besides Go (promtool, amtool), and makes named
// pipes (Mkfifo), and guards a call that could block for ever (Within). Where a program is missing the test is skipped with a message saying
// what to install; where $CI is set it fails instead, because CI installs
// them (scripts/e2e-deps.sh) and a test that silently did not run there
// proves nothing.
package testtool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Need returns the path of the program name, which the Debian package pkg
// provides. Without it, the test is skipped, or fails under CI.
func Need(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	install := "apt-get install -y --no-install-recommends " + pkg + ", or run scripts/e2e-deps.sh"
	if InCI() {
		t.Fatalf("%s is not installed and $CI is set, so this test must run: %s", name, install)
	}
	t.Skipf("SKIPPED: %s is not installed (%s); under CI this fails", name, install)
	return ""
}

// Optional is Need for a program CI need not have: without it the test is
// skipped with the same message, under CI too.
func Optional(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("SKIPPED: %s is not installed (apt-get install -y --no-install-recommends %s)", name, pkg)
	}
	return path
}

// InCI reports whether $CI is set to something other than false or 0, as
// GitHub Actions, GitLab CI and most others set it.
func InCI() bool {
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv("CI"))); v {
	case "", "0", "false", "no":
		return false
	}
	return true
}

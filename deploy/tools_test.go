package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// needTool returns the path of promtool or amtool: the test is skipped,
// saying so, where it is not installed (`make test` needs only Go), and
// fails under CI, which installs Debian's prometheus and
// prometheus-alertmanager packages.
func needTool(t *testing.T, name string) string {
	t.Helper()
	switch name {
	case "amtool":
		return testtool.Need(t, name, "prometheus-alertmanager")
	case "systemd-analyze":
		// Not every CI container has systemd; the unit's settings are
		// checked by the tests above either way.
		return testtool.Optional(t, name, "systemd")
	}
	return testtool.Need(t, name, "prometheus")
}

// runTool runs a tool in dir and fails the test with its output if it fails.
func runTool(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q in %s: %v\n%s", name, args, dir, err, out.String())
	}
	return out.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

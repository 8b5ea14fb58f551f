package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of a command-line tool, or skips the test when
// it is not installed: `make test` needs only Go, while CI installs Debian's
// prometheus and prometheus-alertmanager packages so these tests run there.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install -y --no-install-recommends prometheus prometheus-alertmanager); skipping", name)
	}
	return path
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

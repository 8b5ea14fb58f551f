package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// mcpwatchBin is the mcpwatch binary built for end-to-end tests.
var mcpwatchBin string

// TestMain serves as a scripted browser or a probetest stdio server when
// re-executed as one, and
// otherwise builds mcpwatch once, runs the tests and checks that no
// goroutine outlives them.
func TestMain(m *testing.M) {
	runBrowserIfChild()
	probetest.RunIfChild()
	dir, err := os.MkdirTemp("", "mcpwatch-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcpwatchBin = filepath.Join(dir, "mcpwatch")
	if out, err := exec.Command(goTool(), "build", "-o", mcpwatchBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build mcpwatch: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // SA1019: only when go is not on PATH; a test binary runs where it was built
}

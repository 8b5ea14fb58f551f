//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// suite is what every test shares: where the repository is and the binaries
// built from it. TestMain sets it once before any test runs; tests only read it.
var suite struct {
	root          string // the repository root
	mcpwatch      string // the built mcpwatch binary
	reportserver  string // the built example report server
	everythingBin string // server-everything's entry script in testdata/peers
}

// TestMain builds the binaries once, from this checkout, unless
// MCPWATCH_E2E_BIN names a directory that already holds them (make e2e
// passes its bin/; a relative path starts at the repository root).
func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot find the repository root above %s: %v\n", mustGetwd(), err)
		return 1
	}
	suite.root = root
	suite.everythingBin = filepath.Join(root, "testdata", "peers", "node_modules",
		"@modelcontextprotocol", "server-everything", "dist", "index.js")

	binDir := os.Getenv("MCPWATCH_E2E_BIN")
	if binDir == "" {
		tmp, err := os.MkdirTemp("", "mcpwatch-e2e-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		if err := buildBinaries(root, tmp); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		binDir = tmp
	}
	if !filepath.IsAbs(binDir) {
		binDir = filepath.Join(root, binDir) // as make, at the root, means it
	}
	suite.mcpwatch = filepath.Join(binDir, "mcpwatch")
	suite.reportserver = filepath.Join(binDir, "reportserver")
	for _, bin := range []string{suite.mcpwatch, suite.reportserver} {
		if _, err := os.Stat(bin); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v; run make build, or unset MCPWATCH_E2E_BIN to let the test build it\n", err)
			return 1
		}
	}

	code := m.Run()
	// Keep-alive connections to the programs the tests ran are not leaks.
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: goroutines left running: %v\n", err)
			code = 1
		}
	}
	return code
}

// buildBinaries builds mcpwatch and the report server into dir.
func buildBinaries(root, dir string) error {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	start := time.Now()
	for _, pkg := range []struct{ name, path string }{
		{"mcpwatch", "./cmd/mcpwatch"},
		{"reportserver", "./examples/reportserver"},
	} {
		cmd := exec.Command(goTool, "build", "-o", filepath.Join(dir, pkg.name), pkg.path)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg.path, err, out)
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: built mcpwatch and reportserver in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	return wd
}

// need fails the test when a program it runs is not installed: the e2e tag
// is an explicit request, so a missing dependency is an error, not a skip.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed; run scripts/e2e-deps.sh (make e2e does)", p)
		}
	}
}

// needEverything fails the test unless node and the pinned
// server-everything are installed, and returns node's path.
func needEverything(t *testing.T) string {
	t.Helper()
	need(t, "node")
	node, _ := exec.LookPath("node")
	requireFile(t, suite.everythingBin, "the pinned MCP servers are not installed; run scripts/e2e-deps.sh")
	return node
}

// needPeer fails the test unless node and the pinned npm server pkg are
// installed, and returns node's path and the server's entry script.
func needPeer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	node, err := peertest.Installed(pkg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return node, peertest.Script(pkg)
}

// requireFile fails the test with hint when path does not exist.
func requireFile(t *testing.T, path, hint string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v: %s", err, hint)
	}
}

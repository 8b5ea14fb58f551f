// Package peertest runs, for tests, the real npm MCP servers pinned in
// testdata/peers (server-github, -slack, -brave-search, -postgres,
// -everything, -memory, -filesystem) against stand-ins of the APIs they
// call: an HTTP server answering as GitHub, Slack or Brave Search do (the
// same statuses and bodies for a good, a wrong, a revoked and a missing
// credential), and a PostgreSQL wire-protocol server answering as
// PostgreSQL 15 does. No test needs the network or a real account.
//
// The servers call fixed origins (https://api.github.com, ...) through
// Node's global fetch; NodeEnv gives them a preload
// (testdata/peers/upstreams.cjs) that sends those origins to the stand-ins
// and refuses every other one.
//
// The stand-ins count the requests that would have written (anything but a
// GET to an HTTP API), so a test can assert that a monitor never wrote.
package peertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// The pinned packages, as named in testdata/peers/package.json.
const (
	GitHubServer      = "server-github"
	SlackServer       = "server-slack"
	BraveServer       = "server-brave-search"
	PostgresServer    = "server-postgres"
	EverythingServer  = "server-everything"
	MemoryServer      = "server-memory"
	FilesystemServer  = "server-filesystem"
	packageScope      = "@modelcontextprotocol"
	upstreamsPreload  = "upstreams.cjs"
	installPeersHint  = "install node and npm, then make test installs them (scripts/peers.sh: npm install from the locks in testdata/peers)"
	peersRelativePath = "testdata/peers"
)

// dir is testdata/peers of this checkout, found from this source file: the
// tests that use it run from the source tree.
func dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return peersRelativePath
	}
	return filepath.Join(filepath.Dir(file), "..", "..", peersRelativePath)
}

// Script returns the entry script of a pinned server package (its dist/index.js).
func Script(pkg string) string {
	return filepath.Join(dir(), "node_modules", packageScope, pkg, "dist", "index.js")
}

// Installed reports whether node and the pinned package pkg are installed,
// and says what is missing when not.
func Installed(pkg string) (node string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not installed: %s", installPeersHint)
	}
	if _, err := os.Stat(Script(pkg)); err != nil {
		return "", fmt.Errorf("%s/%s is not installed in %s: %s", packageScope, pkg, dir(), installPeersHint)
	}
	return node, nil
}

// Server returns how to start the pinned server pkg: node and its entry
// script. Without node or the package the test is skipped, or fails under
// CI, which installs them (scripts/e2e-deps.sh).
func Server(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := Installed(pkg)
	if err != nil {
		if testtool.InCI() {
			t.Fatalf("%v, and $CI is set, so this test must run", err)
		}
		t.Skipf("SKIPPED: %v; under CI this fails", err)
	}
	return node, Script(pkg)
}

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// envTestBrowser makes the test binary a scripted browser: it follows the
// URL it is given (its last argument) and its redirects, as a browser whose
// person approves at once, and exits.
const envTestBrowser = "MCPWATCH_TEST_BROWSER"

func runBrowserIfChild() {
	if os.Getenv(envTestBrowser) != "1" || len(os.Args) < 2 {
		return
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get(os.Args[len(os.Args)-1]) //nolint:gosec // G704: the test's own authorization URL, on loopback
	if err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		os.Exit(1)
	}
	resp.Body.Close()
	fmt.Fprintln(os.Stderr, "test browser: ended on HTTP", resp.StatusCode)
	os.Exit(0)
}

// testBrowser writes a $BROWSER script that runs this test binary as the
// scripted browser, and returns its path.
func testBrowser(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "browser")
	body := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", envTestBrowser, self)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

// What go test -json writes for a package with a pass, a skip and a
// failure: the filter prints what plain go test would, and lists the skip
// with its reason.
func TestFilter(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"example.com/p"}`,
		`{"Action":"run","Package":"example.com/p","Test":"TestPass"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestPass","Output":"=== RUN   TestPass\n"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}`,
		`{"Action":"pass","Package":"example.com/p","Test":"TestPass"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestPeer","Output":"=== RUN   TestPeer\n"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestPeer","Output":"    peers.go:82: SKIPPED: node is not installed: install node and npm, then make test installs them (scripts/peers.sh: npm install from testdata/peers/package-lock.json)\n"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestPeer","Output":"--- SKIP: TestPeer (0.00s)\n"}`,
		`{"Action":"skip","Package":"example.com/p","Test":"TestPeer"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestBroken","Output":"    x_test.go:9: got 1, want 2\n"}`,
		`{"Action":"output","Package":"example.com/p","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}`,
		`{"Action":"fail","Package":"example.com/p","Test":"TestBroken"}`,
		`{"Action":"output","Package":"example.com/p","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"example.com/p","Output":"FAIL\texample.com/p\t0.01s\n"}`,
		`{"Action":"fail","Package":"example.com/p"}`,
		`{"Action":"output","Package":"example.com/q","Output":"PASS\n"}`,
		`{"Action":"output","Package":"example.com/q","Output":"ok  \texample.com/q\t0.02s\n"}`,
		`go: some message of go test's own`,
	}, "\n")
	var out bytes.Buffer
	skips, err := filter(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	report(&out, skips)
	want := "    x_test.go:9: got 1, want 2\n--- FAIL: TestBroken (0.00s)\nFAIL\nFAIL\texample.com/p\t0.01s\n" +
		"ok  \texample.com/q\t0.02s\ngo: some message of go test's own\n" +
		"*** make test: 1 tests skipped, each with its reason (a parent skipped covers its subtests): ***\n" +
		"  SKIP example.com/p TestPeer: peers.go:82: SKIPPED: node is not installed: install node and npm, then make test installs them (scripts/peers.sh: npm install from testdata/peers/package-lock.json)\n" +
		"*** make test: 1 of them run the pinned npm MCP servers of testdata/peers: install node (18 or later) and npm, and make test installs the servers (scripts/peers.sh) and runs them. ***\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

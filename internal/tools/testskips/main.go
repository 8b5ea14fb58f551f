// Command testskips reads 'go test -json' on its standard input and writes
// what plain 'go test' prints (each package's ok or FAIL line, the output of
// failing tests, build errors), then every test that was skipped, with the
// reason it gave. 'make test' pipes its runs through it, so a test skipped
// for want of a program (node and the pinned npm servers of testdata/peers,
// promtool, a C compiler) is listed, where plain 'go test' says nothing.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of 'go test -json' (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is one skipped test and the reason its output gave.
type skip struct {
	pkg, test, reason string
}

func main() {
	skips, err := filter(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testskips: %v\n", err)
		os.Exit(1)
	}
	report(os.Stdout, skips)
}

// filter copies what plain go test would print and returns the skips.
func filter(in io.Reader, out io.Writer) ([]skip, error) {
	var skips []skip
	outputs := map[string][]string{} // "pkg test" -> the test's output lines
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// not an event: go test's own messages pass through
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "output" && e.Test == "":
			// the package's lines: ok/FAIL, panics outside a test; not the
			// bare PASS plain go test leaves out
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				fmt.Fprint(out, e.Output)
			}
		case e.Action == "output":
			outputs[key] = append(outputs[key], e.Output)
		case e.Action == "fail" && e.Test != "":
			for _, o := range outputs[key] {
				if !strings.HasPrefix(o, "=== ") {
					fmt.Fprint(out, o)
				}
			}
			delete(outputs, key)
		case e.Action == "skip" && e.Test != "":
			skips = append(skips, skip{pkg: e.Package, test: e.Test, reason: reason(outputs[key])})
			delete(outputs, key)
		case e.Action == "pass":
			delete(outputs, key)
		}
	}
	return skips, sc.Err()
}

// reason is the last line a skipped test wrote before its --- SKIP line:
// the message of t.Skip ("    peers.go:82: SKIPPED: node is not installed ...").
func reason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		return l
	}
	return "(no reason given)"
}

func report(w io.Writer, skips []skip) {
	if len(skips) == 0 {
		return
	}
	fmt.Fprintf(w, "*** make test: %d tests skipped, each with its reason (a parent skipped covers its subtests): ***\n", len(skips))
	peers := 0
	for _, s := range skips {
		fmt.Fprintf(w, "  SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
		if strings.Contains(s.reason, peersDir) {
			peers++
		}
	}
	if peers > 0 {
		fmt.Fprintf(w, "*** make test: %d of them run the pinned npm MCP servers of %s: install node (18 or later) and npm, and make test installs the servers (scripts/peers.sh) and runs them. ***\n", peers, peersDir)
	}
}

// peersDir is where the pinned npm MCP servers are installed: a skip whose
// reason names it was for want of them.
const peersDir = "testdata/peers"

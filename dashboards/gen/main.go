// Command gen writes dashboards/mcpwatch.json, the Grafana dashboard of
// mcpwatch, from Go code (grafana-foundation-sdk builders). Run it with
// `go generate ./dashboards/...`; a test fails when the committed JSON differs
// from what it writes, and dashboards/dashboard_test.go checks the JSON itself.
package main

//go:generate go run . -out ../mcpwatch.json

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "../mcpwatch.json", "dashboard JSON file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	b, err := render()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil { //nolint:gosec // G306: a file committed to the repository, readable by all
		return fmt.Errorf("write dashboard: %w", err)
	}
	return nil
}

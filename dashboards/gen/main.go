// Command gen writes mixin/dashboards/panels.json, the panels of the Grafana
// dashboard of mcpwatch, from Go code (grafana-foundation-sdk builders); the
// mixin applies its _config to them and writes the dashboard users import,
// mixin/dashboards_out/mcpwatch.json. Run it with `go generate ./...` in
// dashboards/, then the mixin's; a test fails when the committed JSON differs
// from what it writes, and dashboards/dashboard_test.go checks the mixin's
// dashboard itself.
package main

//go:generate go run . -out ../../mixin/dashboards/panels.json

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "../../mixin/dashboards/panels.json", "dashboard JSON file to write")
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

// Command gen writes the files the mixin's jsonnet makes: the alert rules
// (prometheus-alerts.yaml), the recording rules (prometheus-rules.yaml) and
// the dashboard (dashboards_out/mcpwatch.json), and the copies of the rule
// files the Helm chart ships (deploy/helm/mcpwatch/files). It evaluates
// mixin.libsonnet with go-jsonnet, so no jsonnet binary is needed. Run it
// with `go generate ./...` in mixin/; a test fails when a committed file
// differs from what it writes.
package main

//go:generate go run . -dir ..

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpwatch/mcpwatch/mixin"
)

func main() {
	dir := flag.String("dir", "..", "the mixin's directory")
	flag.Parse()
	if err := mixin.Write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

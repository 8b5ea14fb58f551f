package metrics_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// documentedFamilies reads the metric families docs/metrics.md's table of
// metrics names: every `name` or `name{labels}` of a row's first column
// (go_* and process_*, the Go client's collectors, are named by pattern).
func documentedFamilies(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Metrics\n")
	if start < 0 {
		t.Fatal("docs/metrics.md has no '## Metrics' section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	// A metric's name, not another word in code type in the first
	// column (the size table names methods there: `initialize`).
	name := regexp.MustCompile("`((?:mcpwatch|mcp)_[a-z_:]+)(?:\\{[^`]*\\})?`")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestMetricsDocumented: docs/metrics.md, which promises "every metric",
// lists every family mcpwatch serves on /metrics and none it does not: the
// alerts' runbook and the dashboard are written from it.
func TestMetricsDocumented(t *testing.T) {
	documented := documentedFamilies(t)
	if len(documented) < 20 {
		t.Fatalf("read %d metric names from docs/metrics.md's table: is the table still there? %v", len(documented), documented)
	}
	var served []string
	for _, n := range metrics.Names() {
		if strings.HasPrefix(n, "mcpwatch_") || strings.HasPrefix(n, "mcp_") {
			served = append(served, n)
		}
	}
	for _, n := range served {
		if !slices.Contains(documented, n) {
			t.Errorf("/metrics serves %s, which docs/metrics.md's table of metrics does not list", n)
		}
	}
	for _, n := range documented {
		if !slices.Contains(served, n) {
			t.Errorf("docs/metrics.md lists %s, which /metrics does not serve", n)
		}
	}
}

package metrics_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/metrics"
)

func TestNamesCoverTheScrape(t *testing.T) {
	names := metrics.Names()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("Names() is not sorted and unique: %v", names)
	}
	h, _, _ := newHandler(newSource(fixtureStatuses()...))
	scraped := map[string]bool{}
	for _, mf := range scrape(t, h) {
		scraped[mf.GetName()] = true
		if !slices.Contains(names, mf.GetName()) {
			t.Errorf("%s is scraped but not in Names()", mf.GetName())
		}
	}
	// The fixture exercises every per-server metric, so a name listed and
	// never scraped is a phantom.
	for _, n := range names {
		if strings.HasPrefix(n, "mcpwatch_") && !scraped[n] {
			t.Errorf("%s is in Names() but the fixture's scrape lacks it", n)
		}
	}
}

func TestSeriesNamesExpandHistograms(t *testing.T) {
	series := metrics.SeriesNames()
	for _, n := range []string{
		"mcpwatch_schedule_lag_seconds_bucket", "mcpwatch_schedule_lag_seconds_count",
		"mcpwatch_tool_missing", "mcpwatch_probe_failures_total", "go_gc_duration_seconds_count",
	} {
		if !slices.Contains(series, n) {
			t.Errorf("SeriesNames() lacks %s", n)
		}
	}
}

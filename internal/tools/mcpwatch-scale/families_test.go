package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestFamilySizes(t *testing.T) {
	a := "# HELP a_total Probes.\n" +
		"# TYPE a_total counter\n" +
		"a_total{server=\"x\"} 1\n" +
		"a_total{server=\"y\"} 2\n"
	h := "# HELP h Lag.\n" +
		"# TYPE h histogram\n" +
		"h_bucket{le=\"+Inf\"} 3\n" +
		"h_sum 1.5\n" +
		"h_count 3\n"
	// h is smaller, listed first: the result is sorted by size. # EOF
	// belongs to no family.
	got := familySizes([]byte(h + a + "# EOF"))
	want := []familySize{
		{Name: "a_total", Bytes: len(a), Series: 2},
		{Name: "h", Bytes: len(h), Series: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("familySizes = %+v, want %+v", got, want)
	}
}

func TestFamilySizesWithoutType(t *testing.T) {
	got := familySizes([]byte("up 1\nup{x=\"1\"} 0\n"))
	want := []familySize{{Name: "up", Bytes: len("up 1\nup{x=\"1\"} 0\n"), Series: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("familySizes = %+v, want %+v", got, want)
	}
}

// The harness parses only the families it reads: a scrape of 100,000
// servers is two million lines it has no use for.
func TestKeepFamilies(t *testing.T) {
	keep := "# HELP mcpwatch_probes_total Probes.\n# TYPE mcpwatch_probes_total counter\n" +
		"mcpwatch_probes_total{server=\"a\"} 3\n" +
		"# TYPE mcpwatch_schedule_lag_seconds histogram\n" +
		"mcpwatch_schedule_lag_seconds_bucket{le=\"+Inf\"} 2\nmcpwatch_schedule_lag_seconds_sum 0.5\nmcpwatch_schedule_lag_seconds_count 2\n" +
		"# TYPE go_goroutines gauge\ngo_goroutines 12\n"
	drop := "# HELP mcpwatch_tool_missing Missing.\n# TYPE mcpwatch_tool_missing gauge\n" +
		"mcpwatch_tool_missing{server=\"a\",tool=\"x\"} 0\n" +
		"mcpwatch_probes_total_created{server=\"a\"} 1\ngo_goroutines_max 3\n"
	got := string(keepFamilies([]byte(drop + keep + drop)))
	if got != keep {
		t.Errorf("keepFamilies kept\n%s\nwant\n%s", got, keep)
	}
	e, err := parseExposition(strings.NewReader(drop + keep))
	if err != nil || e.probes != 3 || e.goroutines != 12 || e.lag.count != 2 {
		t.Errorf("parseExposition = %+v, %v", e, err)
	}
}

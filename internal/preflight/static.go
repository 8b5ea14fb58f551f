package preflight

import (
	"slices"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// Static judges what check judges from the files alone, before it probes
// anything: a locked server the configuration no longer defines (fails),
// and a configured server whose contracts file leaves tools uncovered or
// whose contracts still wait for "<fill in ...>" input (call_coverage,
// failing under --strict). It returns a report per selected server with
// such a problem, sorted by name.
//
// Check reports these from here, whatever a probe then shows; mcpwatch
// doctor runs the same function on the same files, starting no server, so
// that it fails wherever the gate's check would fail on the files alone.
// A configured server the lock does not cover is not here: check words it
// with the tools its probe saw, and doctor reports it of its own.
func Static(in Input, strict bool) []ServerReport {
	selected := func(name string) bool {
		return (len(in.Servers) == 0 || slices.Contains(in.Servers, name)) && !slices.Contains(in.Skip, name)
	}
	var out []ServerReport
	configured := map[string]bool{}
	for _, s := range in.Config.Servers {
		configured[s.Name] = true
		if !selected(s.Name) {
			continue
		}
		if uncovered := Uncovered(s); len(uncovered) > 0 {
			sr := ServerReport{Name: s.Name}
			f := verdict.Finding{Kind: verdict.KindCallCoverage, Fails: strict, Tools: uncovered}
			sr.add(describeCall(f, s, nil))
			out = append(out, sr.settle())
		}
	}
	for _, name := range in.Lock.Servers() {
		if !configured[name] && selected(name) {
			entry, _ := in.Lock.Entry(name)
			out = append(out, notConfigured(name, entry, in.ConfigSource))
		}
	}
	slices.SortFunc(out, func(a, b ServerReport) int { return compareNames(a.Name, b.Name) })
	return out
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

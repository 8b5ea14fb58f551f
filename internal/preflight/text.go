package preflight

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// WriteText writes the report for people (every string a server or a file
// supplied goes through sanitize.Text: one line each, nothing a terminal
// or a CI runner acts on), as the Python preflight did: the
// verdict and the time first, then one line per failing problem, each
// followed by its details indented, then what is reported without failing.
//
//	MCP preflight FAILED in 23 ms (1 of 2 servers failed: missing on 1; 2 of 4 locked tools verified)
//	  - report: 2/2 tools missing -> fetch_daily_report, list_report_dates
//	      if they were removed on purpose, accept it with 'mcpwatch lock --server report' (drops them from the lock)
//	  info: search: 1 extra tool not in the lock -> suggest
//	      once reviewed, lock them with 'mcpwatch lock --server search'
func WriteText(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	if r.Error != "" {
		lines := strings.Split(strings.TrimRight(r.Error, "\n"), "\n")
		if len(lines) == 1 {
			fmt.Fprintf(b, "MCP preflight FAILED: %s\n", sanitize.Text(lines[0]))
		} else {
			fmt.Fprintf(b, "MCP preflight FAILED: %d problems\n", len(lines))
			for _, l := range lines {
				fmt.Fprintf(b, "  - %s\n", sanitize.Text(l))
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}

	b.WriteString(Summary(r) + "\n")
	for _, s := range r.Servers {
		for _, p := range s.Failures() {
			fmt.Fprintf(b, "  - %s: %s\n", sanitize.Text(s.Name), sanitize.Text(p.Message))
			for _, d := range p.Details {
				fmt.Fprintf(b, "      %s\n", sanitize.Text(d))
			}
		}
	}
	for _, s := range r.Servers {
		for _, p := range s.Notes() {
			fmt.Fprintf(b, "  info: %s: %s\n", sanitize.Text(s.Name), sanitize.Text(p.Message))
			for _, d := range p.Details {
				fmt.Fprintf(b, "      %s\n", sanitize.Text(d))
			}
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(b, "  skipped (not probed, --skip or ignore:): %s\n", strings.Join(r.Skipped, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the report's first line.
func Summary(r *Report) string {
	if r.Error != "" {
		return "MCP preflight FAILED: " + sanitize.Text(sanitize.OneLine(r.Error))
	}
	took := formatMillis(time.Duration(r.Duration))
	strict := ""
	if r.Strict {
		strict = ", strict"
	}
	t := r.Totals
	calls := ""
	if t.Calls > 0 {
		calls = fmt.Sprintf("; %d of %s passed", t.Calls-t.CallsFailed, count(t.Calls, "call", "calls"))
	}
	if r.OK {
		return fmt.Sprintf("MCP preflight OK in %s (%s verified across %s%s%s)",
			took, count(t.ToolsVerified, "tool", "tools"), count(t.Servers, "server", "servers"), calls, strict)
	}
	return fmt.Sprintf("MCP preflight FAILED in %s (%d of %s failed: %s; %d of %s verified%s%s)",
		took, t.Failed, count(t.Servers, "server", "servers"), failedKinds(r), t.ToolsVerified, count(t.ToolsLocked, "locked tool", "locked tools"), calls, strict)
}

// failedKinds says why the servers failed, for the summary line: each kind
// of failing problem and on how many servers, the most severe first
// ("call_coverage on 3", "missing on 1, probe_failed on 1"), so that a
// failure whose lines scrolled away, or a strict one, still says why.
func failedKinds(r *Report) string {
	servers := map[verdict.Kind]int{}
	var kinds []verdict.Kind
	for _, s := range r.Servers {
		seen := map[verdict.Kind]bool{}
		for _, p := range s.Failures() {
			if seen[p.Kind] {
				continue
			}
			seen[p.Kind] = true
			if servers[p.Kind] == 0 {
				kinds = append(kinds, p.Kind)
			}
			servers[p.Kind]++
		}
	}
	slices.SortStableFunc(kinds, func(a, b verdict.Kind) int {
		if a == b {
			return 0
		}
		if worst, _ := verdict.Worst([]verdict.Finding{{Kind: a, Fails: true}, {Kind: b, Fails: true}}); worst == a {
			return -1
		}
		return 1
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s on %d", k, servers[k])
	}
	return strings.Join(parts, ", ")
}

// formatMillis writes a duration in whole milliseconds, as the Python preflight does
// ("23 ms"), but never "0 ms" for a run that took time.
func formatMillis(d time.Duration) string {
	ms := d.Round(time.Millisecond).Milliseconds()
	if ms == 0 && d > 0 {
		return "<1 ms"
	}
	return fmt.Sprintf("%d ms", ms)
}

package starter

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// WriteText writes what init did, for people: the lock, each server's
// contracts file, what went wrong, and the table of which canary watches
// each server's credential. Everything a server sent is escaped. Paths
// under dir are written relative to it.
func WriteText(w io.Writer, r *Result, dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "probed %s in %s\n", count(len(r.Servers), "server", "servers"), r.Duration.Round(100*time.Millisecond))

	lock := sanitize.Text(display(r.Lock, dir))
	switch {
	case r.Error != "":
		fmt.Fprintf(&b, "lock %s: not written: %s\n", lock, sanitize.Text(r.Error))
	case r.LockOutcome == "written":
		fmt.Fprintf(&b, "lock %s: added %s\n", lock, sanitize.Join(r.Locked, ", "))
	case r.LockOutcome == "unchanged":
		fmt.Fprintf(&b, "lock %s: unchanged\n", lock)
	default:
		fmt.Fprintf(&b, "lock %s: not written: no server could be locked\n", lock)
	}
	if len(r.LockKept) > 0 {
		fmt.Fprintf(&b, "  kept as they were: %s (init never changes a locked server; 'mcpwatch check' compares, 'mcpwatch lock --server NAME' relocks after review)\n",
			sanitize.Join(r.LockKept, ", "))
	}

	b.WriteString("\ncontracts:\n")
	for _, s := range r.Servers {
		name := sanitize.Text(s.Name)
		file := sanitize.Text(display(s.File, dir))
		switch s.FileOutcome {
		case "":
			fmt.Fprintf(&b, "  %s: none written: the server could not be probed\n", name)
		case "none":
			fmt.Fprintf(&b, "  %s: none written: none of its %s reads, by its annotations or its name\n", name, count(len(s.Result.Tools), "tool", "tools"))
		case "not written":
			fmt.Fprintf(&b, "  %s: not written: %s\n", name, sanitize.Text(s.FileError))
		case "written":
			fmt.Fprintf(&b, "  %s: wrote %s (%s)\n", name, file, tally(s.Entries, nil))
		case "extended", "unchanged":
			verb := "added to"
			if s.FileOutcome == "unchanged" {
				verb = "nothing new for"
			}
			fmt.Fprintf(&b, "  %s: %s %s", name, verb, file)
			if len(s.Merge.Added) > 0 {
				fmt.Fprintf(&b, " (%s)", tally(s.Entries, s.Merge.Added))
			}
			b.WriteString("\n")
			m := s.Merge
			if len(m.Kept) > 0 {
				fmt.Fprintf(&b, "    kept %s", count(len(m.Kept), "contract as it was", "contracts as they were"))
				if len(m.Edited) > 0 {
					fmt.Fprintf(&b, ", edits included: %s", names(m.Edited))
				}
				b.WriteString("\n")
			}
			if len(m.Unlisted) > 0 {
				fmt.Fprintf(&b, "    not listed by the server now (kept; remove them if they are gone for good): %s\n", names(m.Unlisted))
			}
		}
	}

	var problems []string
	for _, s := range r.Servers {
		switch {
		case !s.Result.OK:
			p := sanitize.Text(fmt.Sprintf("%s: could not be probed (%s): %s", s.Name, s.Result.Reason, sanitize.OneLine(s.Result.Error)))
			for _, line := range sanitize.LastLines(s.Result.StderrTail, 3) {
				p += "\n      | " + sanitize.Text(line)
			}
			problems = append(problems, p)
		case s.NotLocked != "":
			problems = append(problems, sanitize.Text(fmt.Sprintf("%s: not locked: %s", s.Name, s.NotLocked)))
		}
	}
	if len(problems) > 0 {
		b.WriteString("\nproblems:\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}

	b.WriteString("\nwhich canary watches each server's credential:\n")
	b.WriteString(indent(canary.Table(r.Rows)))
	b.WriteString("\nNext: read the contracts files (each $comment says why its contract is there and what it takes), remove \"disabled\" only where calling is harmless, filling in any \"<fill in ...>\" value; then commit the lock and the files, and run 'mcpwatch check --strict'.\n")
	if r.Failed() {
		b.WriteString("Some servers could not be set up (above): fix them and run 'mcpwatch init' again; it keeps everything written so far.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tally counts entries by status ("1 enabled, 2 pending, 8 proposed"),
// only those of tools when it is given.
func tally(entries []canary.Entry, tools []string) string {
	n := map[canary.Status]int{}
	for _, e := range entries {
		if tools == nil || contains(tools, e.Tool) {
			n[e.Status]++
		}
	}
	var parts []string
	for _, st := range []canary.Status{canary.Enabled, canary.Pending, canary.Proposed} {
		if n[st] > 0 {
			what := string(st)
			if st == canary.Proposed {
				what = "proposed, disabled"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n[st], what))
		}
	}
	if len(parts) == 0 {
		return "nothing new"
	}
	out := strings.Join(parts, ", ")
	for _, e := range entries {
		if e.Catalogue != "" && (tools == nil || contains(tools, e.Tool)) {
			out += fmt.Sprintf("; %s from the catalogue's entry %s", sanitize.Text(e.Tool), e.Catalogue)
		}
	}
	return out
}

func names(tools []string) string {
	const most = 8
	out := make([]string, 0, most)
	for i, t := range tools {
		if i == most {
			return strings.Join(out, ", ") + fmt.Sprintf(" and %d more", len(tools)-most)
		}
		out = append(out, sanitize.Text(t))
	}
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

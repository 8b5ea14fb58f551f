package doctor

import (
	"bufio"
	"fmt"
	"io"

	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
)

// WriteText writes the report for people: the verdict, the gate judged,
// then each finding as FILE:LINE: problem, and its fix; or, when the gate
// holds, what doctor verified. Every string in a report is sanitized
// already.
func WriteText(w io.Writer, r *Report) error {
	b := bufio.NewWriter(w)
	if r.OK {
		fmt.Fprintln(b, "mcpwatch doctor: the CI gate holds")
		for _, v := range r.Verified {
			fmt.Fprintf(b, "  %s\n", v)
		}
		return b.Flush()
	}
	fmt.Fprintf(b, "mcpwatch doctor: the CI gate does not hold (%d %s)\n", len(r.Findings), plural(len(r.Findings), "finding", "findings"))
	if g := r.Gate; g != nil {
		fmt.Fprintf(b, "  the gate judged (the closest to one): %s:%d, job %s, step \"%s\": %s\n", g.File, g.Line, g.Job, g.Step, g.Command)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(b, "\n%s:%d: %s\n  fix: %s\n", f.File, f.Line, f.Problem, f.Fix)
	}
	return b.Flush()
}

// WriteJSON writes the report as a JSON document (internal/util/jsondoc:
// schema_version first).
func WriteJSON(w io.Writer, r *Report) error {
	return jsondoc.Write(w, r)
}

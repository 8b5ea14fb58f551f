package preflight

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// WriteAnnotations writes GitHub Actions workflow commands: an ::error for
// each failing problem, a ::warning for drift reported without failing (a
// changed schema or description, a duplicate tool name, a probe warning), a ::notice for extra
// tools and unlocked servers. GitHub shows them on the run's summary page.
func WriteAnnotations(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	if r.Error != "" {
		fmt.Fprintf(b, "::error title=%s::%s\n", escapeProperty("MCP preflight"), escapeData(sanitize.Join(strings.Split(r.Error, "\n"), "\n")))
	}
	for _, s := range r.Servers {
		title := escapeProperty("MCP preflight: " + sanitize.Text(s.Name))
		for _, p := range s.Problems {
			level := "notice"
			switch {
			case p.Fails:
				level = "error"
			case p.Kind == verdict.KindSchemaChanged || p.Kind == verdict.KindDescriptionChanged || p.Kind == verdict.KindDuplicate || p.Kind == verdict.KindWarning:
				level = "warning"
			}
			// Each line sanitized, then joined: the line breaks between
			// them are ours (escaped as %0A, shown as lines), and no
			// server string holds one.
			msg := sanitize.Text(p.Message)
			if p.Fails && len(p.Details) > 0 {
				msg += "\n" + sanitize.Join(p.Details, "\n")
			}
			fmt.Fprintf(b, "::%s title=%s::%s\n", level, title, escapeData(msg))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData escapes an annotation's message as the runner expects.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes an annotation property such as title.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// WriteMarkdown writes the report as a GitHub step summary: the verdict,
// one table row per server, and the details of each failure folded away.
func WriteMarkdown(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	if r.Error != "" {
		fmt.Fprintf(b, "### ❌ MCP preflight FAILED\n\n%s\n", cell(r.Error))
		_, err := io.WriteString(w, b.String())
		return err
	}
	icon := "✅"
	if !r.OK {
		icon = "❌"
	}
	fmt.Fprintf(b, "### %s %s\n\n", icon, html.EscapeString(Summary(r)))
	b.WriteString("| Server | Verdict | Locked tools seen | Time | Findings |\n|---|---|---|---|---|\n")
	for _, s := range r.Servers {
		mark := "✅"
		switch {
		case s.Failed:
			mark = "❌"
		case len(s.Problems) > 0:
			mark = "ℹ️"
		}
		took := "–"
		if s.Probe != nil {
			took = formatMillis(s.Probe.Timings.Total)
		}
		var findings []string
		for _, p := range s.Problems {
			findings = append(findings, cell(p.Message))
		}
		fmt.Fprintf(b, "| <code>%s</code> | %s %s | %d of %d | %s | %s |\n", cell(s.Name), mark, s.Verdict,
			len(s.Diff.Expected)-len(s.Diff.Missing)-unverified(s), len(s.Diff.Expected), took, strings.Join(findings, "<br>"))
	}
	writeCallTable(b, r)
	for _, s := range r.Servers {
		for _, p := range s.Failures() {
			if len(p.Details) == 0 {
				continue
			}
			fmt.Fprintf(b, "\n<details><summary>%s: %s</summary>\n\n<pre>%s</pre>\n</details>\n",
				html.EscapeString(sanitize.Text(s.Name)), html.EscapeString(string(p.Kind)), html.EscapeString(sanitize.Join(p.Details, "\n")))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCallTable is one row per contract: what was called and what came
// back.
func writeCallTable(b *strings.Builder, r *Report) {
	if r.Totals.Calls == 0 {
		return
	}
	b.WriteString("\n#### Tool calls\n\n| Server | Tool | Result | Attempts | Time | What came back |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Servers {
		for _, c := range s.Calls {
			result, back := "✅ pass", ""
			if !c.Passed {
				result, back = "❌ "+c.Reason, c.Message
			} else if n := len(c.Attempts); n > 0 {
				back = c.Attempts[n-1].Response
			}
			fmt.Fprintf(b, "| <code>%s</code> | <code>%s</code> | %s | %d | %s | %s |\n", cell(s.Name), cell(c.Tool), cell(result),
				len(c.Attempts), formatMillis(callDuration(c)), cell(back))
		}
	}
}

// unverified counts the locked tools a failed probe could not see (they
// are not in Diff.Missing: nothing was observed).
func unverified(s ServerReport) int {
	if s.Probe != nil && s.Probe.OK {
		return 0
	}
	return len(s.Diff.Expected) - len(s.Diff.Missing)
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = html.EscapeString(sanitize.Join(strings.Split(s, "\n"), "\n"))
	return strings.NewReplacer("|", "&#124;", "\r", "", "\n", "<br>", "`", "&#96;").Replace(s)
}

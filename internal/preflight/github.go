package preflight

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
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
// GitHub refuses a summary over 1 MiB, so a long one is cut between two
// rows or blocks, and says so where it ends.
func WriteMarkdown(w io.Writer, r *Report) error {
	b := &summary{max: maxSummaryBytes}
	if r.Error != "" {
		b.add(fmt.Sprintf("### ❌ MCP preflight FAILED\n\n<pre>%s</pre>\n", html.EscapeString(sanitize.Join(strings.Split(r.Error, "\n"), "\n"))))
		return b.writeTo(w)
	}
	icon := "✅"
	if !r.OK {
		icon = "❌"
	}
	b.add(fmt.Sprintf("### %s %s\n\n", icon, markdownText(Summary(r))))
	b.add("| Server | Verdict | Locked tools seen | Time | Findings |\n|---|---|---|---|---|\n")
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
		b.add(fmt.Sprintf("| <code>%s</code> | %s %s | %d of %d | %s | %s |\n", cell(s.Name), mark, s.Verdict,
			len(s.Diff.Expected)-len(s.Diff.Missing)-unverified(s), len(s.Diff.Expected), took, strings.Join(findings, "<br>")))
	}
	writeCallTable(b, r)
	for _, s := range r.Servers {
		for _, p := range s.Failures() {
			if len(p.Details) == 0 {
				continue
			}
			b.add(fmt.Sprintf("\n<details><summary>%s: %s</summary>\n\n<pre>%s</pre>\n</details>\n",
				html.EscapeString(sanitize.Text(s.Name)), html.EscapeString(string(p.Kind)), html.EscapeString(sanitize.Join(p.Details, "\n"))))
		}
	}
	return b.writeTo(w)
}

// maxSummaryBytes keeps a step summary under GitHub's limit of 1 MiB a
// step, with room for the note that says it was cut.
const maxSummaryBytes = 1<<20 - 8<<10

// summary is a step summary being written: its parts are added whole while
// they fit, and the first that does not ends it with a note.
type summary struct {
	strings.Builder
	max     int
	cut     bool
	dropped int // parts left out
}

func (b *summary) add(part string) {
	if b.cut || b.Len()+len(part) > b.max {
		b.cut = true
		b.dropped++
		return
	}
	b.WriteString(part)
}

func (b *summary) writeTo(w io.Writer) error {
	if b.cut {
		// A blank line ends any table or block the cut left open.
		fmt.Fprintf(b, "\n\n**The summary is cut here**: %s did not fit in GitHub's limit of 1 MiB for a step summary. The job log, `--format json` and `--junit` have the whole report.\n", count(b.dropped, "more row or block", "more rows and blocks"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCallTable is one row per contract: what was called and what came
// back.
func writeCallTable(b *summary, r *Report) {
	if r.Totals.Calls == 0 {
		return
	}
	b.add("\n#### Tool calls\n\n| Server | Tool | Result | Attempts | Time | What came back |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Servers {
		for _, c := range s.Calls {
			result, back := "✅ pass", ""
			if !c.Passed {
				result, back = "❌ "+c.Reason, c.Message
			} else if n := len(c.Attempts); n > 0 {
				back = c.Attempts[n-1].Response
			}
			b.add(fmt.Sprintf("| <code>%s</code> | <code>%s</code> | %s | %d | %s | %s |\n", cell(s.Name), cell(c.Tool), cell(result),
				len(c.Attempts), formatMillis(callDuration(c)), cell(back)))
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

// cell makes text safe inside a Markdown table cell: markdownText, with
// its lines joined by <br>.
func cell(s string) string {
	return strings.ReplaceAll(markdownText(sanitize.Join(strings.Split(s, "\n"), "\n")), "\n", "<br>")
}

// markdownText writes text for Markdown so that it shows as it is, and
// nothing in it is read as Markdown or HTML: HTML escaped, and each
// character that opens inline Markdown (a link or image "[...](...)",
// emphasis * _ ~, code `, an escape \, a table's |) written as a character
// reference, which Markdown shows as the character and never reads as
// syntax. A server's tool name "[x](https://...)" is text, not a link. So
// is a bare "https://evil.example", "www.evil.example" or "a@evil.example",
// which GitHub's Markdown would turn into a link of its own (an extended
// autolink): the ":" of "://", every "@" and the "." after "www", where it
// starts one, are written as references too. An underscore between two
// letters or digits never starts emphasis, and is kept, so
// fetch_daily_report reads as it is.
func markdownText(s string) string {
	s = html.EscapeString(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]):
			b.WriteByte(c)
		case c == '\r':
		case strings.IndexByte("[]*_~`\\|@", c) >= 0,
			c == ':' && strings.HasPrefix(s[i+1:], "//"),
			c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			fmt.Fprintf(&b, "&#%d;", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

package metrics

import (
	"cmp"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/status"
)

// ContentType is the media type of what TextWriter writes: the Prometheus
// text exposition format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// flushSize is how much text the writer gathers before it writes it on:
// few enough writes for a gzip stream or a socket, little memory held.
const flushSize = 32 << 10

// TextWriter renders server statuses straight to the Prometheus text
// exposition format, version 0.0.4, with no metric objects in between: a
// scrape of thousands of servers costs a pass over their statuses, not an
// object per series. It is the one renderer of the per-server metrics, for
// /metrics and /probe alike.
//
// A TextWriter keeps its buffers between calls, so a reused one (from a
// sync.Pool, say) renders a scrape with next to no allocation. It is not
// safe for concurrent use.
type TextWriter struct {
	descs *descs

	out io.Writer
	buf []byte
	err error // the first error of out; nothing more is written after it

	// The family being written, whether its HELP and TYPE lines are still
	// to come (a family without series is left out, as a registry does),
	// and the server label value of the current server.
	fam     *family
	pending bool
	server  string
	om      bool // OpenMetrics headers (see family.omHeader)

	// fleetOperations leaves the per-server request histogram out of
	// WriteStatuses: the Handler serves the fleet's instead (see
	// PerServerOperations). WriteServer always writes it.
	fleetOperations bool

	// Scratch reused between calls.
	labels  []byte // a histogram series' labels
	rows    []row
	tools   []toolLabel
	reasons []reasonCount
}

// row is one server of a scrape: its status and its server label value,
// cleaned and escaped once for all its series.
type row struct {
	st     *status.Server
	server string
}

// NewTextWriter returns a TextWriter.
func NewTextWriter() *TextWriter {
	return &TextWriter{descs: newDescs(), buf: make([]byte, 0, flushSize+4096)}
}

// WriteText writes every per-server family for statuses, and
// mcpwatch_servers, to w. It is a fresh TextWriter's WriteStatuses.
func WriteText(w io.Writer, statuses []status.Server) error {
	return NewTextWriter().WriteStatuses(w, statuses)
}

// WriteServerText writes the families of one server to w: the same series
// WriteText writes for it, and nothing else. /probe answers with this.
func WriteServerText(w io.Writer, st status.Server) error {
	return NewTextWriter().WriteServer(w, st)
}

// WriteStatuses writes every per-server family for statuses, and
// mcpwatch_servers, to w: families sorted by name, each family's series by
// server. Statuses sorted by name, as a status.Source returns them, are taken as they
// are, others sorted first; a server whose name repeats is written once,
// since Prometheus drops the samples of a repeated series. It returns the
// first error of w.
func (t *TextWriter) WriteStatuses(w io.Writer, statuses []status.Server) error {
	return t.writeStatuses(w, statuses, false)
}

// writeStatuses is WriteStatuses, with OpenMetrics' HELP and TYPE lines if
// om (the series are the same; the caller ends the exposition with # EOF).
func (t *TextWriter) writeStatuses(w io.Writer, statuses []status.Server, om bool) error {
	t.begin(w, statuses, om)
	defer t.end()
	for _, f := range t.descs.all {
		if f == t.descs.servers {
			t.buf = append(t.buf, t.header(f)...)
			t.buf = append(t.buf, f.name...)
			t.buf = append(t.buf, ' ')
			t.buf = appendFloat(t.buf, float64(len(t.rows)))
			t.buf = append(t.buf, '\n')
			continue
		}
		if t.fleetOperations && f.name == OperationDurationName {
			continue
		}
		t.writeFamily(f)
		if t.err != nil {
			break
		}
	}
	t.flush()
	return t.err
}

// WriteServer writes the families of st alone to w, without
// mcpwatch_servers. It returns the first error of w.
func (t *TextWriter) WriteServer(w io.Writer, st status.Server) error {
	return t.writeServer(w, st, false)
}

func (t *TextWriter) writeServer(w io.Writer, st status.Server, om bool) error {
	t.begin(w, []status.Server{st}, om)
	defer t.end()
	for _, f := range t.descs.perServer {
		t.writeFamily(f)
		if t.err != nil {
			break
		}
	}
	t.flush()
	return t.err
}

// header is f's HELP and TYPE lines in the format being written.
func (t *TextWriter) header(f *family) string {
	if t.om {
		return f.omHeader
	}
	return f.header
}

func (t *TextWriter) begin(w io.Writer, statuses []status.Server, om bool) {
	t.out, t.err, t.om = w, nil, om
	t.buf = t.buf[:0]
	for i := range statuses {
		t.rows = append(t.rows, row{st: &statuses[i], server: escapeLabel(labelValue(statuses[i].Name, 0))})
	}
	byServer := func(a, b row) int { return strings.Compare(a.server, b.server) }
	if !slices.IsSortedFunc(t.rows, byServer) {
		slices.SortStableFunc(t.rows, byServer)
	}
	t.rows = slices.CompactFunc(t.rows, func(a, b row) bool { return a.server == b.server })
}

// end lets go of everything the call referred to, so that a pooled writer
// keeps no statuses alive.
func (t *TextWriter) end() {
	clear(t.rows[:cap(t.rows)])
	clear(t.tools[:cap(t.tools)])
	clear(t.reasons[:cap(t.reasons)])
	t.rows, t.tools, t.reasons = t.rows[:0], t.tools[:0], t.reasons[:0]
	t.out, t.fam, t.server = nil, nil, ""
}

// writeFamily writes the series of f for every row.
func (t *TextWriter) writeFamily(f *family) {
	t.fam, t.pending = f, true
	for i := range t.rows {
		t.server = t.rows[i].server
		f.render(t, t.rows[i].st)
	}
}

// sample writes one series of the current family and server. values are
// the family's labels after server, in order.
func (t *TextWriter) sample(v float64, values ...string) {
	f := t.fam
	b := t.buf
	if t.pending {
		b = append(b, t.header(f)...)
		t.pending = false
	}
	for i, idx := range f.order {
		b = append(b, f.prefixes[i]...)
		if idx == 0 {
			b = append(b, t.server...) // escaped once per scrape
		} else {
			b = appendEscaped(b, values[idx-1])
		}
	}
	b = append(b, '"', '}', ' ')
	b = appendFloat(b, v)
	b = append(b, '\n')
	t.buf = b
	if len(b) >= flushSize {
		t.flush()
	}
}

// histogram writes one histogram series of the current family and server:
// counts per bucket (not cumulative; the last above every bound), their
// count and sum, values as for sample. Its labels are written once and
// copied into each of its 17 lines.
func (t *TextWriter) histogram(counts []uint64, count uint64, sum float64, values ...string) {
	f := t.fam
	if t.pending {
		t.buf = append(t.buf, t.header(f)...)
		t.pending = false
	}
	les := f.leLabels
	if t.om {
		les = f.omLeLabels
	}
	t.labels = t.appendHistogramLabels(t.labels[:0], values)
	var cumulative uint64
	for i, le := range les {
		if i < len(counts) {
			cumulative += counts[i]
		}
		t.histogramLine("_bucket", le, float64(cumulative))
	}
	t.histogramLine("_sum", `"} `, sum)
	t.histogramLine("_count", `"} `, float64(count))
	if len(t.buf) >= flushSize {
		t.flush()
	}
}

// appendHistogramLabels appends the labels of a histogram's lines after
// their opening brace, up to the last value's closing quote, which each
// line's end writes. A label whose value is empty is left out, as
// Prometheus reads it: a histogram has 17 lines a series, so bytes count.
func (t *TextWriter) appendHistogramLabels(b []byte, values []string) []byte {
	f := t.fam
	first := true
	for i, idx := range f.order {
		value := t.server
		if idx > 0 {
			value = values[idx-1]
			if value == "" {
				continue
			}
		}
		if first {
			b = append(b, f.labelStarts[i]...)
			first = false
		} else {
			b = append(b, f.prefixes[i]...)
		}
		if idx == 0 {
			b = append(b, value...) // escaped once per scrape
		} else {
			b = appendEscaped(b, value)
		}
	}
	return b
}

// histogramLine writes one line of a histogram: the family's name with
// suffix, the labels appendHistogramLabels wrote, then end (the le label,
// or the closing quote and brace) and v.
func (t *TextWriter) histogramLine(suffix, end string, v float64) {
	f := t.fam
	b := append(t.buf, f.name...)
	b = append(b, suffix...)
	b = append(b, '{')
	b = append(b, t.labels...)
	b = append(b, end...)
	b = appendFloat(b, v)
	t.buf = append(b, '\n')
}

func (t *TextWriter) flush() {
	if t.err == nil && len(t.buf) > 0 {
		_, t.err = t.out.Write(t.buf)
	}
	t.buf = t.buf[:0]
}

// appendFloat formats v as the Prometheus client libraries do: the shortest
// 'g' form, with the text format's spellings of infinity and NaN.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(b, '0')
	case v == 1:
		return append(b, '1')
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// labelEscapes are the bytes the text format escapes in a label value.
const labelEscapes = "\\\"\n"

// appendEscaped appends a label value escaped for the text format:
// backslash, double quote and line feed.
func appendEscaped(b []byte, s string) []byte {
	if !strings.ContainsAny(s, labelEscapes) {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// escapeLabel returns s escaped for the text format, s itself when nothing
// needs escaping.
func escapeLabel(s string) string {
	if !strings.ContainsAny(s, labelEscapes) {
		return s
	}
	return string(appendEscaped(nil, s))
}

// toolLabel is one tool series: the label value, and whether the tool is in
// the flagged list (missing, for mcpwatch_tool_missing).
type toolLabel struct {
	name    string
	flagged bool
}

// appendToolLabels appends names as label values to dst, each cut to the
// tool label limit, sorted and without repeats. Names are server-chosen in
// the end (a lock is written from a probe), so two may become one label once
// cut: they then share one series, flagged if either is, rather than make a
// repeated series whose samples Prometheus would drop.
func appendToolLabels(dst []toolLabel, names, flagged []string) []toolLabel {
	start := len(dst)
	sortedFlags := slices.IsSorted(flagged) // lockstore.Diff lists are; search them fast
	for _, n := range names {
		var isFlagged bool
		if sortedFlags {
			_, isFlagged = slices.BinarySearch(flagged, n)
		} else {
			isFlagged = slices.Contains(flagged, n)
		}
		dst = append(dst, toolLabel{name: labelValue(n, maxToolLabelBytes), flagged: isFlagged})
	}
	out := dst[start:]
	byName := func(a, b toolLabel) int { return cmp.Compare(a.name, b.name) }
	if !slices.IsSortedFunc(out, byName) {
		slices.SortFunc(out, byName)
	}
	merged := out[:0]
	for _, t := range out {
		if n := len(merged); n > 0 && merged[n-1].name == t.name {
			merged[n-1].flagged = merged[n-1].flagged || t.flagged
			continue
		}
		merged = append(merged, t)
	}
	return dst[:start+len(merged)]
}

// reasonCount is the failure count of a reason outside probe.Reasons.
type reasonCount struct {
	label string
	n     uint64
}

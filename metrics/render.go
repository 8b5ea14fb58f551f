package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/probe"
)

// maxForbiddenSeries bounds mcpwatch_tool_forbidden per server: the forbidden
// tools are the server's own names, and a hostile server could list thousands
// that match a pattern. The count metric still carries the full number.
const maxForbiddenSeries = 50

// renderFunc writes the series of one family for one server, with
// TextWriter.sample. Which series are present is decided here, and only
// here.
type renderFunc func(t *TextWriter, st *status.Server)

// observed reports whether the last probe saw the tool surface. A failed
// probe observed nothing about it: the tool metrics stay absent, and the
// failure shows in mcpwatch_probe_success.
func observed(st *status.Server) bool { return st.Last != nil && st.Last.OK }

// compared reports whether the last probe's surface was compared with a lock
// entry: without one, nothing is missing, extra or changed.
func compared(st *status.Server) bool { return observed(st) && st.Diff.Locked }

// Present from the moment the server is configured.

func renderInterval(t *TextWriter, st *status.Server) {
	if st.Interval > 0 {
		t.sample(st.Interval.Seconds())
	}
}

func renderToolsExpected(t *TextWriter, st *status.Server) {
	if st.Diff.Locked {
		t.sample(float64(len(st.Diff.Expected)))
	}
}

func renderLastSuccess(t *TextWriter, st *status.Server) {
	if !st.LastSuccess.IsZero() {
		t.sample(unixSeconds(st.LastSuccess))
	}
}

func renderProbes(t *TextWriter, st *status.Server) {
	t.sample(float64(st.Probes))
}

// renderFailures writes a reason's series from the server's first failure
// of that reason on: a server that never failed has none. Every reason
// from 0 was 17 series a server (1.25 kB of a scrape, 12 MB at 10,000
// servers), nearly all 0 for the server's life. The price: a series born
// at 1 has no earlier sample, so increase() misses that first failure;
// no alert condition reads these counters (probe_success decides), and
// McpProbeFailing's summary counts a series born within its window whole
// (metrics.md says how to query them).
func renderFailures(t *TextWriter, st *status.Server) {
	if len(st.Failures) == 0 {
		return // most servers, at every scrape
	}
	for _, r := range probe.Reasons {
		if n := st.Failures[r]; n > 0 {
			t.sample(float64(n), string(r))
		}
	}
	// A reason missing from probe.Reasons is a bug in probe, but its failures
	// still count; the set stays bounded by the code, not by servers. Two
	// such reasons cut to one label share a series.
	t.reasons = t.reasons[:0]
	for r, n := range st.Failures {
		if r != probe.ReasonNone && !slices.Contains(probe.Reasons, r) {
			t.reasons = append(t.reasons, reasonCount{label: labelValue(string(r), maxInfoLabelBytes), n: n})
		}
	}
	slices.SortFunc(t.reasons, func(a, b reasonCount) int { return cmp.Compare(a.label, b.label) })
	for i, rc := range t.reasons {
		if i > 0 && t.reasons[i-1].label == rc.label {
			continue
		}
		n := rc.n
		for _, next := range t.reasons[i+1:] {
			if next.label != rc.label {
				break
			}
			n += next.n
		}
		t.sample(float64(n), rc.label)
	}
}

// renderInfo writes mcpwatch_server_info from the last successful probe, so
// the server's name and version stay known while it fails.
func renderInfo(t *TextWriter, st *status.Server) {
	ok := st.LastOK
	if ok == nil {
		return
	}
	transport := ok.Transport
	if transport == "" {
		transport = st.Transport
	}
	t.sample(1,
		labelValue(string(transport), maxInfoLabelBytes),
		labelValue(string(ok.Era), maxInfoLabelBytes),
		labelValue(ok.ProtocolVersion, maxInfoLabelBytes),
		labelValue(ok.ServerName, maxInfoLabelBytes),
		labelValue(ok.ServerVersion, maxInfoLabelBytes),
	)
}

// Present once a probe ended, failed or not.

func renderSuccess(t *TextWriter, st *status.Server) {
	if st.Last != nil {
		t.sample(boolValue(st.Last.OK))
	}
}

func renderDuration(t *TextWriter, st *status.Server) {
	if st.Last != nil {
		t.sample(st.Last.Timings.Total.Seconds())
	}
}

func renderPhaseDuration(t *TextWriter, st *status.Server) {
	last := st.Last
	if last == nil {
		return
	}
	var list time.Duration
	for _, p := range last.Timings.Pages {
		list += p
	}
	t.sample(last.Timings.Connect.Seconds(), phaseConnect)
	t.sample(last.Timings.Handshake.Seconds(), phaseHandshake)
	t.sample(list.Seconds(), phaseList)
}

func renderLastProbe(t *TextWriter, st *status.Server) {
	if last := st.Last; last != nil && !last.Started.IsZero() {
		t.sample(unixSeconds(last.Started.Add(last.Timings.Total)))
	}
}

// Present when the last probe observed the surface.

func renderTools(t *TextWriter, st *status.Server) {
	if observed(st) {
		t.sample(float64(len(st.Last.Tools)))
	}
}

func renderToolsForbidden(t *TextWriter, st *status.Server) {
	if observed(st) {
		t.sample(float64(len(st.Diff.Forbidden)))
	}
}

func renderToolsDuplicate(t *TextWriter, st *status.Server) {
	if observed(st) {
		t.sample(float64(len(st.Diff.Duplicate)))
	}
}

func renderToolForbidden(t *TextWriter, st *status.Server) {
	if !observed(st) {
		return
	}
	t.tools = appendToolLabels(t.tools[:0], st.Diff.Forbidden, nil)
	for _, tl := range t.tools[:min(len(t.tools), maxForbiddenSeries)] {
		t.sample(1, tl.name)
	}
}

// Present when the last probe observed the surface and the lock has an
// entry to compare it with.

func renderToolsMissing(t *TextWriter, st *status.Server) {
	if compared(st) {
		t.sample(float64(len(st.Diff.Missing)))
	}
}

func renderToolsExtra(t *TextWriter, st *status.Server) {
	if compared(st) {
		t.sample(float64(len(st.Diff.Extra)))
	}
}

func renderToolsChanged(t *TextWriter, st *status.Server) {
	if compared(st) {
		t.sample(float64(len(st.Diff.SchemaChanged)), changeSchema)
		t.sample(float64(len(st.Diff.DescriptionChanged)), changeDescription)
	}
}

func renderToolMissing(t *TextWriter, st *status.Server) {
	if !compared(st) {
		return
	}
	t.tools = appendToolLabels(t.tools[:0], st.Diff.Expected, st.Diff.Missing)
	for _, tl := range t.tools {
		t.sample(boolValue(tl.flagged), tl.name)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds keeps sub-second precision. Whole and fractional seconds are
// converted apart: nanoseconds since 1970 exceed float64's exact integers.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// The listener of a server that announces changes (watch_changes).

func renderListenerUp(t *TextWriter, st *status.Server) {
	if l := st.Listener; l != nil {
		up := 0.0
		if l.Up {
			up = 1
		}
		t.sample(up)
	}
}

func renderListenerFloods(t *TextWriter, st *status.Server) {
	if l := st.Listener; l != nil {
		t.sample(float64(l.Floods))
	}
}

func renderChangeNotifications(t *TextWriter, st *status.Server) {
	if l := st.Listener; l != nil {
		t.sample(float64(l.Notifications))
	}
}

package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpwatch/mcpwatch/probe"
)

// maxForbiddenSeries bounds mcpwatch_tool_forbidden per server: the forbidden
// tools are the server's own names, and a hostile server could list thousands
// that match a pattern. The count metric still carries the full number.
const maxForbiddenSeries = 50

// Collector renders the statuses of a Source as metrics at every scrape. It
// keeps no series between scrapes: what the Source no longer returns is gone
// from the next scrape.
type Collector struct {
	src   Source
	descs *descs
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector over src. Register it on the registry that
// serves /metrics.
func NewCollector(src Source) *Collector {
	return &Collector{src: src, descs: newDescs()}
}

// Describe sends the descriptor of every metric the Collector can render.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs.all {
		ch <- d
	}
}

// Collect renders the Source's current statuses.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	statuses := c.src.Statuses()
	servers := 0
	for i := range statuses {
		// Source returns statuses sorted by name; a repeated name would make
		// duplicate series, and a registry fails the whole scrape on those.
		if i > 0 && statuses[i].Name == statuses[i-1].Name {
			continue
		}
		c.descs.collectServer(ch, &statuses[i])
		servers++
	}
	ch <- prometheus.MustNewConstMetric(c.descs.servers, prometheus.GaugeValue, float64(servers))
}

// collectServer renders one server's status. It is shared by the /metrics
// Collector and the single-server registry of /probe.
func (d *descs) collectServer(ch chan<- prometheus.Metric, st *ServerStatus) {
	e := emitter{ch: ch, server: labelValue(st.Name, 0)}

	if st.Interval > 0 {
		e.gauge(d.interval, st.Interval.Seconds())
	}
	if st.Diff.Locked {
		e.gauge(d.toolsExpected, float64(len(st.Diff.Expected)))
	}
	if !st.LastSuccess.IsZero() {
		e.gauge(d.lastSuccess, unixSeconds(st.LastSuccess))
	}
	d.collectCounters(e, st)
	if st.LastOK != nil {
		d.collectInfo(e, st)
	}

	last := st.Last
	if last == nil {
		return // never probed: nothing observed yet
	}
	e.gauge(d.success, boolValue(last.OK))
	e.gauge(d.duration, last.Timings.Total.Seconds())
	var list time.Duration
	for _, p := range last.Timings.Pages {
		list += p
	}
	e.gauge(d.phaseDuration, last.Timings.Connect.Seconds(), phaseConnect)
	e.gauge(d.phaseDuration, last.Timings.Handshake.Seconds(), phaseHandshake)
	e.gauge(d.phaseDuration, list.Seconds(), phaseList)
	if !last.Started.IsZero() {
		e.gauge(d.lastProbe, unixSeconds(last.Started.Add(last.Timings.Total)))
	}

	if !last.OK {
		// A failed probe observed nothing about the surface: the tool
		// metrics stay absent, and the failure shows in probe_success.
		return
	}
	e.gauge(d.tools, float64(len(last.Tools)))
	e.gauge(d.toolsForbidden, float64(len(st.Diff.Forbidden)))
	forbidden := toolLabels(st.Diff.Forbidden, nil)
	if len(forbidden) > maxForbiddenSeries {
		forbidden = forbidden[:maxForbiddenSeries]
	}
	for _, t := range forbidden {
		e.gauge(d.toolForbidden, 1, t.name)
	}

	if !st.Diff.Locked {
		return // no lock entry: nothing to be missing, extra or changed against
	}
	e.gauge(d.toolsMissing, float64(len(st.Diff.Missing)))
	e.gauge(d.toolsExtra, float64(len(st.Diff.Extra)))
	e.gauge(d.toolsChanged, float64(len(st.Diff.SchemaChanged)), changeSchema)
	e.gauge(d.toolsChanged, float64(len(st.Diff.DescriptionChanged)), changeDescription)
	for _, t := range toolLabels(st.Diff.Expected, st.Diff.Missing) {
		e.gauge(d.toolMissing, boolValue(t.flagged), t.name)
	}
}

// collectCounters renders the probe counters, present from the moment the
// server is configured.
func (d *descs) collectCounters(e emitter, st *ServerStatus) {
	e.counter(d.probes, float64(st.Probes))
	// Every known reason from 0: a reason's series that appears only with its
	// first failure starts at 1, and increase() never counts that failure.
	// The cost is len(probe.Reasons) series per server, a fixed and small set.
	for _, r := range probe.Reasons {
		e.counter(d.failures, float64(st.Failures[r]), string(r))
	}
	if len(st.Failures) == 0 {
		return
	}
	// A reason missing from probe.Reasons is a bug in probe, but its failures
	// still count; the set stays bounded by the code, not by servers.
	var unknown []string
	for r := range st.Failures {
		if r != probe.ReasonNone && !slices.Contains(probe.Reasons, r) {
			unknown = append(unknown, string(r))
		}
	}
	slices.Sort(unknown)
	for _, r := range unknown {
		e.counter(d.failures, float64(st.Failures[probe.Reason(r)]), labelValue(r, maxInfoLabelBytes))
	}
}

// collectInfo renders mcpwatch_server_info from the last successful probe.
func (d *descs) collectInfo(e emitter, st *ServerStatus) {
	ok := st.LastOK
	transport := ok.Transport
	if transport == "" {
		transport = st.Transport
	}
	e.gauge(d.info, 1,
		labelValue(string(transport), maxInfoLabelBytes),
		labelValue(string(ok.Era), maxInfoLabelBytes),
		labelValue(ok.ProtocolVersion, maxInfoLabelBytes),
		labelValue(ok.ServerName, maxInfoLabelBytes),
		labelValue(ok.ServerVersion, maxInfoLabelBytes),
	)
}

// emitter sends the series of one server.
type emitter struct {
	ch     chan<- prometheus.Metric
	server string
}

func (e emitter) gauge(desc *prometheus.Desc, v float64, labels ...string) {
	e.send(desc, prometheus.GaugeValue, v, labels)
}

func (e emitter) counter(desc *prometheus.Desc, v float64, labels ...string) {
	e.send(desc, prometheus.CounterValue, v, labels)
}

func (e emitter) send(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	values := make([]string, 0, 1+len(labels))
	values = append(values, e.server)
	values = append(values, labels...)
	e.ch <- prometheus.MustNewConstMetric(desc, t, v, values...)
}

// toolLabel is one tool series: the label value, and whether the tool is in
// the flagged list (missing, for mcpwatch_tool_missing).
type toolLabel struct {
	name    string
	flagged bool
}

// toolLabels turns tool names into label values, each cut to the tool label
// limit, sorted and without repeats. Names are server-chosen in the end (a
// lock is written from a probe), so two may become one label once cut: they
// then share one series, flagged if either is, rather than make a duplicate
// series that fails the whole scrape.
func toolLabels(names, flagged []string) []toolLabel {
	out := make([]toolLabel, 0, len(names))
	for _, n := range names {
		out = append(out, toolLabel{
			name:    labelValue(n, maxToolLabelBytes),
			flagged: slices.Contains(flagged, n), // flagged is short: the missing few
		})
	}
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
	return merged
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

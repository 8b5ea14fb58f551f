package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Names returns the name of every metric family mcpwatch exports on
// /metrics, sorted: the per-server families of the TextWriter, mcpwatch's own
// (build, reload, scheduling) and the Go and process collectors' families. A
// histogram is listed once by its family name; SeriesNames adds the _bucket,
// _sum and _count names a query uses.
//
// It is read from the family table and from a throwaway registry, not kept by
// hand, so a test over it (every dashboard panel's metric exists) cannot go
// stale.
func Names() []string {
	names := newDescs().names()
	for _, mf := range ownFamilies() {
		names = append(names, mf.GetName())
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// SeriesNames returns every metric name that can appear in a query of
// mcpwatch's /metrics: Names, with each histogram's and summary's
// _bucket/_sum/_count series added.
func SeriesNames() []string {
	var names []string
	for _, f := range newDescs().all {
		names = append(names, f.seriesNames()...)
	}
	for _, mf := range ownFamilies() {
		n := mf.GetName()
		names = append(names, n)
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names = append(names, n+"_bucket", n+"_sum", n+"_count")
		case dto.MetricType_SUMMARY:
			names = append(names, n+"_sum", n+"_count")
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ownFamilies gathers a fresh registry holding only mcpwatch's own metrics:
// all of them have a value from the start, so every family shows.
func ownFamilies() []*dto.MetricFamily {
	reg := prometheus.NewRegistry()
	d, err := NewDaemon(reg)
	if err != nil {
		panic(err) // a fresh registry: only a bug in this package gets here
	}
	// A family whose series appear with their first event (one a service
	// and answer) is served all the same.
	d.IssuerChecked("github", probe.IssuerAccepted)
	mfs, err := reg.Gather()
	if err != nil {
		panic(err) // as above: the families are fixed by this package
	}
	return mfs
}

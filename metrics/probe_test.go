package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// ProbeRegistry must render exactly what /metrics has for the server: the
// same code, so the same series.
func TestProbeRegistryMatchesMetrics(t *testing.T) {
	all := gather(t, collectorRegistry(t, newSource(fixtureStatuses()...)))
	for _, st := range fixtureStatuses() {
		t.Run(st.Name, func(t *testing.T) {
			reg := metrics.ProbeRegistry(st)
			mfs := gather(t, reg)
			got, want := seriesOf(mfs, st.Name), seriesOf(all, st.Name)
			if !mapsEqual(got, want) {
				t.Errorf("/probe series differ from /metrics:\n got %v\nwant %v", got, want)
			}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					if label(m, "server") != st.Name {
						t.Errorf("%s series without server=%q: %v", mf.GetName(), st.Name, m)
					}
				}
			}
			problems, err := testutil.GatherAndLint(reg)
			if err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}

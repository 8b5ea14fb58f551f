package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpwatch/mcpwatch/metrics"
)

func newDaemon(t *testing.T) (*prometheus.Registry, *metrics.Daemon) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	d, err := metrics.NewDaemon(reg)
	if err != nil {
		t.Fatalf("NewDaemon: %v", err)
	}
	return reg, d
}

func TestDaemonReload(t *testing.T) {
	reg, d := newDaemon(t)
	const help = `# HELP mcpwatch_config_last_reload_successful 1 if the last load of the configuration succeeded, 0 if it failed and the previous configuration kept running.
# TYPE mcpwatch_config_last_reload_successful gauge
# HELP mcpwatch_config_last_reload_success_timestamp_seconds Unix time of the last successful load of the configuration.
# TYPE mcpwatch_config_last_reload_success_timestamp_seconds gauge
`
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"before the first load", func() {}, `
mcpwatch_config_last_reload_successful 0
mcpwatch_config_last_reload_success_timestamp_seconds 0
`},
		{"loaded", func() { d.ReloadSucceeded(base) }, `
mcpwatch_config_last_reload_successful 1
mcpwatch_config_last_reload_success_timestamp_seconds 1.7776368e+09
`},
		{"broken file keeps the last success time", func() { d.ReloadFailed() }, `
mcpwatch_config_last_reload_successful 0
mcpwatch_config_last_reload_success_timestamp_seconds 1.7776368e+09
`},
		{"fixed", func() { d.ReloadSucceeded(base.Add(90 * time.Second)) }, `
mcpwatch_config_last_reload_successful 1
mcpwatch_config_last_reload_success_timestamp_seconds 1.77763689e+09
`},
	}
	for _, s := range steps {
		s.do()
		err := testutil.GatherAndCompare(reg, strings.NewReader(help+s.want),
			"mcpwatch_config_last_reload_successful", "mcpwatch_config_last_reload_success_timestamp_seconds")
		if err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}

func TestDaemonProbes(t *testing.T) {
	reg, d := newDaemon(t)
	doneLate := d.ProbeStarted(base, base.Add(20*time.Millisecond))
	doneEarly := d.ProbeStarted(base, base.Add(-time.Millisecond)) // a timer firing early counts as on time
	doneOnDemand := d.ProbeStarted(time.Time{}, base)              // /probe: no schedule, no lag
	doneSlow := d.ProbeStarted(base, base.Add(12*time.Second))

	if got := gaugeValue(t, reg, "mcpwatch_probes_in_flight"); got != 4 {
		t.Errorf("probes in flight %v, want 4", got)
	}
	doneLate()
	doneEarly()
	doneOnDemand()
	doneSlow()

	want := `# HELP mcpwatch_probes_in_flight Probes running now.
# TYPE mcpwatch_probes_in_flight gauge
mcpwatch_probes_in_flight 0
# HELP mcpwatch_schedule_lag_seconds How late scheduled probes started against their scheduled time, mostly waiting for a free worker. Probes run on mcpwatch's schedule, not on scrape.
# TYPE mcpwatch_schedule_lag_seconds histogram
mcpwatch_schedule_lag_seconds_bucket{le="0.001"} 1
mcpwatch_schedule_lag_seconds_bucket{le="0.0025"} 1
mcpwatch_schedule_lag_seconds_bucket{le="0.005"} 1
mcpwatch_schedule_lag_seconds_bucket{le="0.01"} 1
mcpwatch_schedule_lag_seconds_bucket{le="0.025"} 2
mcpwatch_schedule_lag_seconds_bucket{le="0.05"} 2
mcpwatch_schedule_lag_seconds_bucket{le="0.1"} 2
mcpwatch_schedule_lag_seconds_bucket{le="0.25"} 2
mcpwatch_schedule_lag_seconds_bucket{le="0.5"} 2
mcpwatch_schedule_lag_seconds_bucket{le="1"} 2
mcpwatch_schedule_lag_seconds_bucket{le="2.5"} 2
mcpwatch_schedule_lag_seconds_bucket{le="5"} 2
mcpwatch_schedule_lag_seconds_bucket{le="10"} 2
mcpwatch_schedule_lag_seconds_bucket{le="30"} 3
mcpwatch_schedule_lag_seconds_bucket{le="+Inf"} 3
mcpwatch_schedule_lag_seconds_sum 12.02
mcpwatch_schedule_lag_seconds_count 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"mcpwatch_probes_in_flight", "mcpwatch_schedule_lag_seconds"); err != nil {
		t.Error(err)
	}
}

func gather(t testing.TB, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return mfs
}

// gaugeValue reads an unlabelled gauge as a scrape would.
func gaugeValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	return value(t, gather(t, g), name)
}

func TestNewDaemonRefusesARegistryThatHasItsMetrics(t *testing.T) {
	reg, _ := newDaemon(t)
	if _, err := metrics.NewDaemon(reg); err == nil {
		t.Fatal("a second NewDaemon on the same registry succeeded; want an error")
	}
}

func TestNewRegistryHoldsOwnMetricsOnly(t *testing.T) {
	reg, d := metrics.NewRegistry()
	d.ReloadSucceeded(base)
	mfs := gather(t, reg)
	for _, name := range []string{
		"mcpwatch_build_info", "mcpwatch_config_last_reload_successful", "mcpwatch_probes_in_flight",
		"mcpwatch_schedule_lag_seconds", "go_goroutines", "process_start_time_seconds",
	} {
		if family(mfs, name) == nil {
			t.Errorf("%s missing from the own registry", name)
		}
	}
	if family(mfs, "mcpwatch_servers") != nil {
		t.Error("the own registry holds mcpwatch_servers: it is the TextWriter's")
	}
}

func TestLintOwn(t *testing.T) {
	reg, _ := metrics.NewRegistry()
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

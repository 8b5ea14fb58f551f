package metrics

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Reasons a scheduled probe did not run: the label values of
// mcpwatch_probes_skipped_total, a fixed set.
const (
	// SkipStillQueued: the server's previous probe was still waiting for a
	// slot of the pool, which is too small for the fleet.
	SkipStillQueued = "still_queued"
	// SkipStillRunning: the server's previous probe (scheduled, on demand
	// or after an announced change) was still running.
	SkipStillRunning = "still_running"
	// SkipLate: the scheduler ran late and skipped the firings it missed.
	SkipLate = "late"
	// SkipCallsStillWaiting: a call firing found the server's previous one
	// still waiting for its probe to end.
	SkipCallsStillWaiting = "calls_still_waiting"
	// SkipCallsBackedOff: a call firing came while a rate limit or a
	// quota an answer showed held the server's calls.
	SkipCallsBackedOff = "calls_backed_off"
)

// SkipReasons are every reason a scheduled probe is skipped.
var SkipReasons = []string{SkipStillQueued, SkipStillRunning, SkipLate, SkipCallsStillWaiting, SkipCallsBackedOff}

// scheduleLagBuckets span 1 ms (a free worker) to 30 s (a pool saturated for
// a whole default interval).
var scheduleLagBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Daemon holds mcpwatch's own metrics: how the process, its configuration
// and its scheduler are doing, as opposed to the servers it probes. Its
// methods are safe for concurrent use.
type Daemon struct {
	reloadSuccessful prometheus.Gauge
	reloadTimestamp  prometheus.Gauge
	lockSuccessful   prometheus.Gauge
	lockTimestamp    prometheus.Gauge
	probesInFlight   prometheus.Gauge
	probesSkipped    *prometheus.CounterVec
	issuerChecks     *prometheus.CounterVec
	scheduleLag      prometheus.Histogram
	shardInfo        *prometheus.GaugeVec
	operations       *prometheus.HistogramVec // the fleet's requests (operations.go)
}

// NewDaemon registers mcpwatch's own metrics on reg: build info, config
// reload and lock read status, probes in flight, scheduling lag, and the Go and process
// collectors. It fails if reg already holds any of them.
func NewDaemon(reg prometheus.Registerer) (*Daemon, error) {
	d := &Daemon{
		reloadSuccessful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpwatch_config_last_reload_successful",
			Help: "1 if the last load of the configuration succeeded, 0 if it failed and the previous configuration kept running.",
		}),
		reloadTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpwatch_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful load of the configuration.",
		}),
		lockSuccessful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpwatch_lock_last_read_successful",
			Help: "1 if the last read of the lock file succeeded (or no lock is configured), 0 if the file is missing, unreadable or invalid; then the last good lock stays in force (none if there was none).",
		}),
		lockTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpwatch_lock_last_read_success_timestamp_seconds",
			Help: "Unix time of the last successful read of the lock file (it is read again whenever it changes); 0 if none has succeeded.",
		}),
		probesInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpwatch_probes_in_flight",
			Help: "Probes running now.",
		}),
		probesSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpwatch_probes_skipped_total",
			Help: "Scheduled probes that did not run, by reason: " + SkipStillQueued + " (the server's previous probe was still waiting for a free slot: defaults.concurrency is too small for the fleet), " +
				SkipStillRunning + " (its previous probe was still running: the server takes longer than its interval), " +
				SkipLate + " (mcpwatch itself fell behind its schedule, starved of CPU or suspended: the firings it missed are skipped, not run in a burst), " +
				SkipCallsStillWaiting + " (a canary call firing found the previous one still waiting for the server's probe to end), " +
				SkipCallsBackedOff + " (a canary call firing came while a rate limit or a quota an answer showed held the server's calls). A skipped firing is not made up; the next one tries again.",
		}, []string{"reason"}),
		issuerChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpwatch_issuer_checks_total",
			Help: "Requests mcpwatch made to the services that issued the servers' credentials (issuer checks at their identity endpoints), by the catalogue's service ID and what the service answered: accepted, rejected, unreachable, limited (a 429: the next check waits as long as it asked) or unknown. One request per credential per defaults.issuer_check_interval at most, whatever the servers sharing it.",
		}, []string{"service", "verdict"}),
		scheduleLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mcpwatch_schedule_lag_seconds",
			Help:    "How late scheduled probes started against their scheduled time, mostly waiting for a free worker. Probes run on mcpwatch's schedule, not on scrape.",
			Buckets: scheduleLagBuckets,
		}),
		shardInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcpwatch_shard_info",
			Help: "The shard of the fleet this mcpwatch probes, value 1: index in [0, total). It probes the servers whose name hashes to its index (md5, as Prometheus's hashmod relabelling); index 0 of total 1 is the whole fleet. Every replica of a shard exports the same labels, so alert rules can tell which shards have a replica up.",
		}, []string{"index", "total"}),
	}
	d.operations = newFleetOperations()
	d.SetShard(0, 1)
	for _, r := range SkipReasons {
		d.probesSkipped.WithLabelValues(r) // every reason from 0, so increase() counts the first skip
	}
	for _, c := range []prometheus.Collector{
		d.reloadSuccessful, d.reloadTimestamp, d.lockSuccessful, d.lockTimestamp, d.probesInFlight, d.probesSkipped, d.issuerChecks, d.scheduleLag, d.shardInfo, d.operations,
		versioncollector.NewCollector("mcpwatch"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register mcpwatch's own metrics: %w", err)
		}
	}
	return d, nil
}

// NewRegistry returns a fresh registry holding mcpwatch's own metrics, the
// part of /metrics that is not rendered from the statuses (NewHandler serves
// both), and the Daemon that records into it.
func NewRegistry() (*prometheus.Registry, *Daemon) {
	reg := prometheus.NewRegistry()
	d, err := NewDaemon(reg)
	if err != nil {
		// A fresh registry holds nothing to collide with: only a bug in this
		// package (two metrics of one name) gets here, and every test sees it.
		panic(err)
	}
	return reg, d
}

// IssuerChecked counts a request made to a credential's issuer, by its
// service and answer.
func (d *Daemon) IssuerChecked(service string, verdict probe.IssuerVerdict) {
	d.issuerChecks.WithLabelValues(service, string(verdict)).Inc()
}

// SetShard records the shard this mcpwatch probes: index of total.
func (d *Daemon) SetShard(index, total int) {
	d.shardInfo.Reset()
	d.shardInfo.WithLabelValues(strconv.Itoa(index), strconv.Itoa(total)).Set(1)
}

// ReloadSucceeded records a configuration that loaded at t and now runs.
func (d *Daemon) ReloadSucceeded(t time.Time) {
	d.reloadSuccessful.Set(1)
	d.reloadTimestamp.Set(unixSeconds(t))
}

// ReloadFailed records a configuration that did not load; the previous one
// keeps running.
func (d *Daemon) ReloadFailed() {
	d.reloadSuccessful.Set(0)
}

// LockReadSucceeded records a lock file read (or found unchanged after a
// failure) at t, or no lock configured.
func (d *Daemon) LockReadSucceeded(t time.Time) {
	d.lockSuccessful.Set(1)
	d.lockTimestamp.Set(unixSeconds(t))
}

// LockReadFailed records a lock file that is missing or could not be read;
// the last good lock stays in force.
func (d *Daemon) LockReadFailed() {
	d.lockSuccessful.Set(0)
}

// ProbesSkipped records n scheduled probes that did not run, for reason
// (one of SkipReasons).
func (d *Daemon) ProbesSkipped(reason string, n int) {
	d.probesSkipped.WithLabelValues(reason).Add(float64(n))
}

// ProbeStarted records a probe that started at started, scheduled for
// scheduled (zero for a probe nobody scheduled, such as /probe, which then
// adds no lag). Call the returned func exactly once when the probe ends.
func (d *Daemon) ProbeStarted(scheduled, started time.Time) (done func()) {
	if !scheduled.IsZero() {
		d.scheduleLag.Observe(max(started.Sub(scheduled), 0).Seconds())
	}
	d.probesInFlight.Inc()
	return d.probesInFlight.Dec
}

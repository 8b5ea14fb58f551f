package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// scaleOptions describe one run of a fleet under mcpwatch serve.
type scaleOptions struct {
	label            string
	mode             string // "http" or "stdio"
	n                int
	interval         time.Duration
	duration         time.Duration // the probe window, rounded up to whole intervals
	warmup           time.Duration // more waiting after the first round, before the window
	timeout          time.Duration
	concurrency      int
	stdioConcurrency int
	listeners        int
	failShare        float64
	slowShare        float64
	slowDelay        time.Duration
	seed             uint64
	scrapes          int           // in the scrape phase, one a second
	promInterval     time.Duration // scrapes during the probe window, as Prometheus would
	mcpwatch         string
	testserver       string
	pprofDir         string
	peers            string // testdata/peers: the pinned npm servers (npx and runners modes)
	goMemLimit       string // GOMEMLIMIT for mcpwatch, "" for none
	fingerprints     bool   // lock schema fingerprints and description hashes
	calls            callSpec
	watch            bool // every server watch_changes: true, its stream held open
	keep             bool
	floor            bool      // http mode: measure the floor after mcpwatch (floor.go)
	tls              bool      // http mode: the fleet over HTTPS with a test CA (tlsfleet.go)
	h2               bool      // with tls: the fleet offers HTTP/2 too
	out              io.Writer // progress lines
}

// runScale starts a fleet and mcpwatch serve over it, measures a probe
// window and a scrape phase, stops mcpwatch and looks for what it left.
func runScale(ctx context.Context, o scaleOptions) (*result, error) {
	dir, err := os.MkdirTemp("", "mcpwatch-scale-")
	if err != nil {
		return nil, fmt.Errorf("make a work directory: %w", err)
	}
	if o.keep {
		fmt.Fprintf(o.out, "work directory kept: %s\n", dir)
	} else {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	ds := daemonSettings{interval: o.interval, timeout: o.timeout, concurrency: o.concurrency, stdioConcurrency: o.stdioConcurrency}
	runID := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	marker := markerEnv + "=" + runID

	var configPath string
	var fleet *fleetServer
	var tf *tlsFleet
	var servers []simServer
	switch o.mode {
	case "http":
		servers = planFleet(fleetSpec{readOnlyTool: o.calls.auto > 0, n: o.n, listeners: o.listeners, failShare: o.failShare, slowShare: o.slowShare, slowDelay: o.slowDelay, seed: o.seed})
		if o.tls {
			if tf, err = newTLSFleet(dir, o.h2); err != nil {
				return nil, err
			}
		}
		fleet, err = startFleet(servers, o.listeners, o.watch, tf)
		if err != nil {
			return nil, err
		}
		defer fleet.close()
		if configPath, err = writeHTTPConfig(dir, fleet, servers, ds, o.fingerprints, o.calls, o.watch); err != nil {
			return nil, err
		}
	case "stdio":
		testserver, err := copyExecutable(o.testserver, filepath.Join(dir, "mcpwatch-testserver"))
		if err != nil {
			return nil, fmt.Errorf("test server binary: %w (run 'make build-bench' or pass -testserver)", err)
		}
		if configPath, err = writeStdioConfig(dir, testserver, runID, planStdioFleet(o.n), ds); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown mode %q (want http or stdio)", o.mode)
	}

	res := &result{
		Label: o.label, Mode: o.mode, N: o.n, IntervalS: o.interval.Seconds(),
		Concurrency: o.concurrency, StdioConcurrency: o.stdioConcurrency,
		LoadStart: loadAverage(), Cores: numCores(), Fingerprints: o.fingerprints, GoMemLimit: o.goMemLimit,
		Watch: o.watch, Origins: o.listeners,
	}
	if tf != nil {
		res.TLS = "HTTP/1.1"
		if o.h2 {
			res.TLS = "HTTP/2"
		}
	}
	res.SystemProcsBefore = len(readProcessTable())
	harnessCPU0, _ := readProcStat(os.Getpid())

	env := minimalEnv()
	if o.goMemLimit != "" {
		env = append(env, "GOMEMLIMIT="+o.goMemLimit)
	}
	if tf != nil {
		env = append(env, "SSL_CERT_FILE="+tf.caFile)
	}
	d, err := startDaemon(ctx, o.mcpwatch, configPath, dir, o.pprofDir != "", env, nil)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = d.stop()
		}
	}()
	fmt.Fprintf(o.out, "%s: mcpwatch (pid %d) probing %d %s servers every %s; waiting for the first round\n",
		o.label, d.pid(), o.n, o.mode, o.interval)

	// The first round is spread over at most a few seconds; readiness
	// waits for it, and a server not probed by then shows in the report.
	if err := d.waitFor(ctx, "/-/ready", max(5*time.Minute, 2*o.interval)); err != nil {
		return nil, fmt.Errorf("waiting for the first round: %w\n%s", err, d.logTail())
	}
	if o.warmup > 0 {
		fmt.Fprintf(o.out, "%s: warming up for %s\n", o.label, o.warmup)
	}
	select {
	case <-time.After(time.Second + o.warmup):
	case <-ctx.Done():
		return nil, ctx.Err()
	}

	if fleet != nil && o.floor {
		// One interval of the window: every server's requests once.
		now := time.Now()
		fleet.handler.rec.to.Store(now.Add(o.interval).UnixNano())
		fleet.handler.rec.from.Store(now.UnixNano())
	}
	var hs0, rs0 int64
	if tf != nil {
		hs0, rs0 = tf.counts()
		res.HandshakesBefore = hs0
	}
	if err := measureProbeWindow(ctx, o, d, marker, res); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.logTail())
	}
	if tf != nil {
		hs1, rs1 := tf.counts()
		res.setHandshakes(hs1-hs0, rs1-rs0)
	}
	if err := measureScrapes(ctx, o, d, res); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.logTail())
	}
	if o.pprofDir != "" {
		if err := saveProfile(ctx, d, "/debug/pprof/heap", o.pprofDir, o.label+".heap.pb.gz"); err != nil {
			fmt.Fprintf(o.out, "%s: heap profile: %v\n", o.label, err)
		}
	}

	res.OpenFDs = openFDs(d.pid())
	if o.watch {
		if body, _, err := d.get(ctx, "/metrics"); err == nil {
			res.ListenersUp = countSeries(string(body), "mcpwatch_change_listener_up{", " 1")
		}
	}
	mem, _ := readMemStatus(d.pid())
	res.RSSPeakMB = mb(mem.peakRSS)
	res.RSSEndMB = mb(mem.rss)
	if err := measurePages(ctx, d, res); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.logTail())
	}
	if mem, err := readMemStatus(d.pid()); err == nil {
		res.RSSPeakPagesMB = mb(mem.peakRSS)
	}
	res.LogWarnings = d.logWarnings()
	stopTook, stopErr := d.stop()
	stopped = true
	res.StopS = stopTook.Seconds()
	if stopErr != nil {
		res.Notes = append(res.Notes, stopErr.Error())
	}
	// Every process mcpwatch started is gone once it has exited: count the
	// marked ones now, and again a moment later for any still dying.
	res.MarkedAfterStop = markedProcesses(marker)
	time.Sleep(500 * time.Millisecond)
	res.MarkedAfterStop = max(res.MarkedAfterStop, markedProcesses(marker))
	res.SystemProcsAfter = len(readProcessTable())
	harnessCPU1, _ := readProcStat(os.Getpid())
	res.HarnessCPUS = (harnessCPU1.cpu - harnessCPU0.cpu).Seconds()
	if fleet != nil && o.floor {
		fmt.Fprintf(o.out, "%s: the floor: the same requests from a minimal client; load %s\n", o.label, loadAverage())
		plan := fleet.handler.rec.plan(fleet, servers, o.interval, time.Duration(res.Rounds)*o.interval)
		var floorEnv []string
		var window func(bool)
		if tf != nil {
			floorEnv = append(floorEnv, "SSL_CERT_FILE="+tf.caFile)
			var at int64
			window = func(shut bool) {
				n, _ := tf.counts()
				if shut {
					res.FloorHandshakes = n - at
				}
				at = n
			}
		}
		cpu, fr, err := runFloor(ctx, dir, plan, floorEnv, window)
		if err != nil {
			return nil, fmt.Errorf("the floor: %w", err)
		}
		res.setFloor(cpu, fr)
	}
	res.LoadEnd = loadAverage()
	return res, nil
}

// measureProbeWindow measures whole rounds of probes: throughput, lag,
// CPU, memory, skipped probes, drift of each server's phase and, for stdio,
// the processes mcpwatch keeps.
func measureProbeWindow(ctx context.Context, o scaleOptions, d *daemonProc, marker string, res *result) error {
	rounds := max(int(math.Ceil(float64(o.duration)/float64(o.interval))), 1)
	window := time.Duration(rounds) * o.interval

	api0, err := d.servers(ctx)
	if err != nil {
		return err
	}
	s0, err := d.snapshot(ctx)
	if err != nil {
		return err
	}
	if s0.expo.probedServers < o.n {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d servers not yet probed when the window opened", o.n-s0.expo.probedServers, o.n))
	}
	fmt.Fprintf(o.out, "%s: measuring %d rounds (%s); load %s\n", o.label, rounds, window, loadAverage())

	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	watch := &processWatch{pid: d.pid(), marker: marker}
	wg.Go(func() { watch.run(wctx, o.mode == "stdio") })
	var prom []time.Duration
	wg.Go(func() { prom = scrapeEvery(wctx, d, o.promInterval, 0) })
	if o.pprofDir != "" {
		// Not canceled with the window: a profile ends on its own, within
		// a second of it.
		secs := max(int(window.Seconds())-1, 1)
		wg.Go(func() {
			if err := saveProfile(ctx, d, "/debug/pprof/profile?seconds="+strconv.Itoa(secs), o.pprofDir, o.label+".cpu.pb.gz"); err != nil {
				fmt.Fprintf(o.out, "%s: CPU profile: %v\n", o.label, err)
			}
		})
	}
	select {
	case <-time.After(time.Until(s0.at.Add(window))):
	case <-ctx.Done():
	}
	s1, err := d.snapshot(ctx)
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	api1, err := d.servers(ctx)
	if err != nil {
		return err
	}

	elapsed := s1.at.Sub(s0.at)
	probes := s1.expo.probes - s0.expo.probes
	cpu := s1.cpu - s0.cpu
	res.Rounds = rounds
	res.WindowS = elapsed.Seconds()
	res.Probes = probes
	res.ScheduledPerS = float64(o.n) / o.interval.Seconds()
	res.AchievedPerS = probes / elapsed.Seconds()
	res.CPUS = cpu.Seconds()
	res.CPUPercent = 100 * cpu.Seconds() / elapsed.Seconds()
	if probes > 0 {
		res.CPUPer1000S = 1000 * cpu.Seconds() / probes
	}
	if cpu > 0 {
		res.ProbesPerCPUS = probes / cpu.Seconds()
	}
	var failed float64
	for reason, v := range s1.expo.failures {
		failed += v - s0.expo.failures[reason]
	}
	if probes > 0 {
		res.FailedShare = failed / probes
	}
	if len(s1.expo.skipped) > 0 {
		res.SkippedByReason = map[string]float64{}
		for reason, v := range s1.expo.skipped {
			res.SkippedByReason[reason] = v - s0.expo.skipped[reason]
		}
	}
	lag := s1.expo.lag.minus(s0.expo.lag)
	res.LagP50S, _ = lag.quantile(0.5)
	res.LagP99S, res.LagOverflow = lag.quantile(0.99)
	res.LagMaxBucketS = lag.maxBound()
	if math.IsInf(res.LagMaxBucketS, 1) {
		// JSON has no infinity; the overflow flag says it.
		res.LagMaxBucketS, res.LagOverflow = -1, true
	}
	res.Goroutines = s1.expo.goroutines
	res.PromScrapes = len(prom) + 1 // and the first snapshot's
	if len(prom) > 0 {
		res.PromScrapeMaxMS = 1000 * percentile(seconds(prom), 100)
	}
	res.perServer(api0, api1, o.interval)
	res.callFigures(o, api0, api1)
	res.MaxChildren, res.MaxZombies, res.MaxMarked = watch.result()
	return nil
}

// measureScrapes scrapes /metrics once a second, as a busy Prometheus
// would, and works out what a scrape costs mcpwatch beyond its probing.
func measureScrapes(ctx context.Context, o scaleOptions, d *daemonProc, res *result) error {
	if o.scrapes <= 0 {
		return nil
	}
	c0, err := readProcStat(d.pid())
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	if o.pprofDir != "" {
		wg.Go(func() {
			path := "/debug/pprof/profile?seconds=" + strconv.Itoa(o.scrapes)
			if err := saveProfile(ctx, d, path, o.pprofDir, o.label+".scrape.cpu.pb.gz"); err != nil {
				fmt.Fprintf(o.out, "%s: CPU profile of the scrapes: %v\n", o.label, err)
			}
		})
	}
	start := time.Now()
	var last []byte
	took := scrapeEvery(ctx, d, time.Second, o.scrapes, func(body []byte) { last = body })
	elapsed := time.Since(start)
	c1, err := readProcStat(d.pid())
	wg.Wait()
	if err != nil {
		return err
	}
	if len(took) == 0 {
		return fmt.Errorf("no /metrics scrape succeeded")
	}
	ms := seconds(took)
	for i := range ms {
		ms[i] *= 1000
	}
	res.Scrapes = len(took)
	res.ScrapeP50MS = percentile(ms, 50)
	res.ScrapeP99MS = percentile(ms, 99)
	res.ScrapeBytes = len(last)
	res.ScrapeFamilies = familySizes(last)
	probing := time.Duration(res.CPUS / res.WindowS * float64(elapsed))
	res.ScrapeCPUMS = 1000 * (c1.cpu - c0.cpu - probing).Seconds() / float64(len(took))
	return nil
}

// measurePages times what an operator or a script reads besides /metrics:
// a page of 1,000 servers of the API and the status page's first page,
// each the slowest of three, then the API's whole list once (at 100,000
// servers, a document of hundreds of MB: its memory shows in the peak RSS
// after the pages).
func measurePages(ctx context.Context, d *daemonProc, res *result) error {
	for _, pg := range []struct {
		path  string
		times int
		ms    *float64
		bytes *int
	}{
		{"/api/v1/servers?limit=1000", 3, &res.APIPageMS, &res.APIPageBytes},
		{"/", 3, &res.StatusPageMS, &res.StatusPageBytes},
		{"/api/v1/servers", 1, &res.APIServersMS, &res.APIServersBytes},
	} {
		for range pg.times {
			body, took, err := d.get(ctx, pg.path)
			if err != nil {
				return err
			}
			*pg.ms = max(*pg.ms, 1000*took.Seconds())
			*pg.bytes = len(body)
		}
	}
	return nil
}

// scrapeEvery GETs /metrics every period until ctx ends or count scrapes
// are done (count 0: no limit) and returns how long each took. A scrape
// slower than the period delays the next, as Prometheus never overlaps
// scrapes of one target.
func scrapeEvery(ctx context.Context, d *daemonProc, period time.Duration, count int, read ...func([]byte)) []time.Duration {
	var took []time.Duration
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for count == 0 || len(took) < count {
		select {
		case <-ctx.Done():
			return took
		case <-ticker.C:
		}
		body, t, err := d.get(ctx, "/metrics")
		if err != nil {
			continue
		}
		took = append(took, t)
		for _, f := range read {
			f(body)
		}
	}
	return took
}

func saveProfile(ctx context.Context, d *daemonProc, path, dir, name string) error {
	body, _, err := d.get(ctx, path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), body, 0o600)
}

// minimalEnv is what mcpwatch gets: enough to run, nothing of the
// harness's own.
func minimalEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// processWatch samples, while a window runs, the processes below mcpwatch
// and those carrying the run's marker.
type processWatch struct {
	pid    int
	marker string

	mu                          sync.Mutex
	maxChildren, maxZombies, mx int
}

func (w *processWatch) run(ctx context.Context, stdio bool) {
	if !stdio {
		return
	}
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		all, zombies := readProcessTable().descendants(w.pid)
		marked := markedProcesses(w.marker)
		w.mu.Lock()
		w.maxChildren = max(w.maxChildren, all)
		w.maxZombies = max(w.maxZombies, zombies)
		w.mx = max(w.mx, marked)
		w.mu.Unlock()
	}
}

func (w *processWatch) result() (children, zombies, marked int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxChildren, w.maxZombies, w.mx
}

// countSeries counts the lines of a scrape that start with prefix and end
// with suffix.
func countSeries(text, prefix, suffix string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, suffix) {
			n++
		}
	}
	return n
}

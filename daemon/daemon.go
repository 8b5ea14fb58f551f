package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/shard"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Options are a Daemon's process-level settings: what a reload of the
// configuration file does not change. Zero values take the defaults.
type Options struct {
	// Logger receives the state changes of servers, reloads and errors.
	// Default: no logging.
	Logger *zap.Logger
	// History is how many probes are kept per server, and as many failed
	// ones besides. Default 20.
	History int
	// Lookup reads the variables that ${VAR} references name. Default
	// os.LookupEnv.
	Lookup func(string) (string, bool)
	// ConfigFile is the file a reload reads. Default: the Path of the
	// configuration given to New.
	ConfigFile string
	// Load reads the configuration file on reload. Default imports.Load.
	Load func(path string) (*config.Config, error)
	// FirstRoundSpread caps the window over which the first probes of the
	// servers present at start are spread. Default 5s.
	FirstRoundSpread time.Duration
	// AddedSpread caps the same window for servers a reload adds. Default 1s.
	AddedSpread time.Duration
	// ShutdownTimeout bounds how long Close waits for running probes after
	// canceling them. Default 5s.
	ShutdownTimeout time.Duration
	// EnablePprof serves net/http/pprof under /debug/pprof/.
	EnablePprof bool
	// EnableLifecycle serves POST /-/reload; without it the endpoint
	// answers 403 (SIGHUP still reloads).
	EnableLifecycle bool
	// RoutePrefix is the path every endpoint is served under, as
	// NormalizeRoutePrefix makes it. Default "/".
	RoutePrefix string
	// ExternalURL is the URL people and Prometheus reach the daemon at,
	// if it is behind a proxy: its host passes the Host check of a
	// loopback listener, and the log names it.
	ExternalURL *url.URL
	// ReadHeaderTimeout and IdleTimeout bound a slow client and an idle
	// keep-alive connection. Defaults 10s and 2m.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// MaxProbeWaiters bounds the /probe requests waiting for one server's
	// probe; one more is answered 429. Default 16.
	MaxProbeWaiters int
	// ProbeTimeoutOffset is taken from a scrape's timeout (Prometheus's
	// X-Prometheus-Scrape-Timeout-Seconds) to bound a /probe, leaving time
	// for the answer, as blackbox_exporter's --timeout-offset. Default
	// 0.5s.
	ProbeTimeoutOffset time.Duration
	// Timeout, when positive, replaces every server's probe deadline
	// (serve --timeout), as check's --timeout does; a command that installs
	// what it runs still gets its start_timeout while it starts.
	Timeout time.Duration
	// Version is mcpwatch's version: reported to servers as
	// clientInfo.version, and shown on the status page.
	Version string
	// Replica names this daemon among replicas that watch the same
	// servers; it moves the phase of every @every schedule (see phased), so
	// two replicas named NAME-0 and NAME-1 probe each server half an
	// interval apart. Empty: the phase of the server's name alone.
	Replica string
	// Shard is the part of the fleet this daemon probes: the servers whose
	// name hashes to it (package shard). Zero: every server.
	Shard shard.Shard
	// PeerURLs are the status pages of the other replicas or shards, linked
	// from this one.
	PeerURLs []string
	// PerServerHistograms exports the request histogram per server, tool
	// and protocol version, as /probe does, instead of the fleet's one
	// (metrics.PerServerOperations).
	PerServerHistograms bool
	// Probe probes one server once. Default runner.Probe; a test gives a
	// function that answers without a server (see ProbeFunc).
	Probe ProbeFunc
}

// ProbeFunc is how the daemon probes a server once, with runner.Probe's
// contract: take a slot of pool (a stdio server also a stdio slot), call
// req.OnStart once it has one, probe within the server's deadline, and
// return the Observation, a canceled one when ctx ends first. Every
// scheduled, call and on-demand probe goes through it, as every probe of
// blackbox_exporter goes through its prober functions: it is the one seam
// between the daemon's schedules and the servers, so the daemon's timing
// is tested with a function that needs no server (and, in a
// testing/synctest bubble, no real time).
type ProbeFunc func(ctx context.Context, pool *runner.Pool, s config.Server, req runner.Request) runner.Observation

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.History <= 0 {
		o.History = 20
	}
	if o.Lookup == nil {
		o.Lookup = os.LookupEnv
	}
	if o.Load == nil {
		o.Load = imports.Load
	}
	if o.Probe == nil {
		o.Probe = runner.Probe
	}
	if o.FirstRoundSpread <= 0 {
		o.FirstRoundSpread = 5 * time.Second
	}
	if o.AddedSpread <= 0 {
		o.AddedSpread = time.Second
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 5 * time.Second
	}
	o.Shard = o.Shard.Normalized()
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = defaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.MaxProbeWaiters <= 0 {
		o.MaxProbeWaiters = defaultMaxProbeWaiters
	}
	if o.ProbeTimeoutOffset <= 0 {
		o.ProbeTimeoutOffset = defaultProbeTimeoutOffset
	}
	o.RoutePrefix = NormalizeRoutePrefix(o.RoutePrefix, o.ExternalURL)
	return o
}

// Daemon probes the configured servers on their schedules and keeps their
// latest status. It implements status.Source.
type Daemon struct {
	opts Options
	log  *zap.Logger
	reg  *prometheus.Registry // what /metrics serves
	self *metrics.Daemon
	lock *lockFile
	// relocks spares the lock check every second a visit of each server
	// while the lock is unchanged (relockAll).
	relocks relocks
	table   *timetable
	pages   *pages
	oauth   oauth.Cache // OAuth clients by server: tokens live across probes
	// issuers asks the services that issued the servers' credentials about
	// them, each credential once an interval whatever the servers using it.
	issuers *issuer.Checker

	// ctx ends every goroutine and probe the daemon started; wg waits for
	// them.
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	enterMu sync.Mutex // orders wg.Add against Close
	closing bool

	startOnce sync.Once
	closeOnce sync.Once
	closeErr  error

	reloadMu sync.Mutex // one reload at a time

	mu      sync.RWMutex // guards the configuration side
	cfg     *config.Config
	servers map[string]*server
	names   []string  // sorted keys of servers
	gens    uint64    // the last schedule generation handed out; see nextGen
	started time.Time // when Start scheduled the first round; zero before
	pool    *runner.Pool
	conns   *probe.ConnPool // HTTP keep-alive connections, reused between probes
	lives   liveSessions    // stdio servers kept running between probes (live.go)

	// The first round: ready once every server present at start has
	// finished a probe, or readyBy has passed.
	firstMu      sync.Mutex
	firstPending map[string]bool
	readyBy      time.Time
	ready        atomic.Bool

	// The last reload's failure, for the status page.
	healthMu       sync.Mutex
	reloadErr      string
	reloadErrSince time.Time

	// /probe's bounds: on-demand probes running, requests waiting.
	onDemand      atomic.Int64
	probeRequests atomic.Int64
	prio          *priority
	starts        startQueue // scheduled probes due, waiting for room in the pool

	queueWarn rateLimit // the warning of probes skipped for want of a slot
}

var _ status.Source = (*Daemon)(nil)

// ErrClosed is returned by what a closed Daemon can no longer do.
var ErrClosed = errors.New("daemon is shut down")

// New returns a Daemon for a loaded configuration (config.Load's, or one
// built in code and given its defaults by Config.Normalize). It starts nothing: call
// Start, then Close. An error means the configuration cannot run (a
// schedule mcpwatch cannot read) and names the server.
func New(cfg *config.Config, opts Options) (*Daemon, error) {
	opts = opts.withDefaults()
	d := &Daemon{
		opts:      opts,
		log:       opts.Logger,
		table:     newTimetable(),
		prio:      newPriority(),
		queueWarn: rateLimit{period: queueWarnEvery},
		servers:   map[string]*server{},
		conns:     probe.NewConnPool(),
		issuers:   issuer.NewChecker(nil, cfg.Defaults.IssuerInterval, opts.Version),
	}
	if err := opts.Shard.Validate(); err != nil {
		return nil, err
	}
	plans, err := plan(cfg, d.placement())
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	d.pages = pages
	// A registry of its own, never the global one: /metrics serves it.
	d.reg, d.self = metrics.NewRegistry()
	d.self.SetShard(opts.Shard.Index, opts.Shard.Total)
	d.lock = newLockFile(opts.Logger, d.self)
	d.issuers.OnAsked(d.self.IssuerChecked)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.install(cfg, plans)
	d.self.ReloadSucceeded(time.Now())
	return d, nil
}

// Start begins the schedules: a first probe of every server, spread with
// jitter over a few seconds, then each on its own schedule. It returns at
// once; Close stops everything it started.
func (d *Daemon) Start() {
	d.startOnce.Do(func() {
		now := time.Now()
		d.mu.Lock()
		d.started = now
		var longest time.Duration
		d.firstMu.Lock()
		d.firstPending = make(map[string]bool, len(d.servers))
		for _, name := range d.names {
			s := d.servers[name]
			d.firstPending[name] = true
			longest = max(longest, s.probeTimeout(d.opts.Timeout))
			d.table.add(slot{due: firstDue(s.sched, now, d.opts.FirstRoundSpread), name: name, gen: s.gen})
			d.addCallSlots(s, now, d.opts.FirstRoundSpread)
		}
		// Ready at the latest when the last first probe, started at the end
		// of the spread and then waiting its turn, would have timed out.
		d.readyBy = now.Add(d.opts.FirstRoundSpread + longest + time.Second)
		if len(d.firstPending) == 0 {
			d.ready.Store(true)
		}
		d.firstMu.Unlock()
		d.mu.Unlock()

		for _, loop := range []func(context.Context){
			func(ctx context.Context) { d.table.run(ctx, d.fire) },
			d.watchLock,
		} {
			if !d.enter() {
				return // closed before it started
			}
			go func() {
				defer d.wg.Done()
				loop(d.ctx)
			}()
		}
	})
}

// Close stops the schedules, cancels the running probes (which kills their
// process groups) and waits for every goroutine of the daemon, within
// Options.ShutdownTimeout or ctx, whichever ends first.
func (d *Daemon) Close(ctx context.Context) error {
	d.closeOnce.Do(func() {
		d.stop()
		done := make(chan struct{})
		go func() {
			d.wg.Wait()
			close(done)
		}()
		timer := time.NewTimer(d.opts.ShutdownTimeout)
		defer timer.Stop()
		select {
		case <-done:
			d.conns.Close()
			d.lives.closeAll()
		case <-ctx.Done():
			d.closeErr = fmt.Errorf("shut down: probes still running: %w", ctx.Err())
		case <-timer.C:
			d.closeErr = fmt.Errorf("shut down: probes still running after %s", d.opts.ShutdownTimeout)
		}
	})
	return d.closeErr
}

// stop refuses new work and cancels everything running: the schedules,
// the probes (killing their process groups) and on-demand requests.
func (d *Daemon) stop() {
	d.enterMu.Lock()
	d.closing = true
	d.enterMu.Unlock()
	d.cancel()
}

// Ready reports whether the first round of probes has finished, or had the
// time to.
func (d *Daemon) Ready() bool {
	if d.ready.Load() {
		return true
	}
	d.firstMu.Lock()
	defer d.firstMu.Unlock()
	if d.firstPending != nil && time.Now().After(d.readyBy) {
		d.ready.Store(true)
	}
	return d.ready.Load()
}

// firstDone notes the first probe of a server of the first round.
func (d *Daemon) firstDone(name string) {
	if d.ready.Load() {
		return
	}
	d.firstMu.Lock()
	defer d.firstMu.Unlock()
	if d.firstPending == nil {
		return
	}
	delete(d.firstPending, name)
	if len(d.firstPending) == 0 {
		d.ready.Store(true)
	}
}

// Statuses returns the status of every configured server, sorted by name.
// It implements status.Source.
func (d *Daemon) Statuses() []status.Server {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]status.Server, len(d.names))
	for i, name := range d.names {
		out[i] = d.servers[name].snapshot()
	}
	return out
}

// placement is this daemon's replica name and shard, from its options.
func (d *Daemon) placement() placement {
	return placement{replica: d.opts.Replica, shard: d.opts.Shard}
}

// Registry is the registry /metrics serves.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Config returns the running configuration.
func (d *Daemon) Config() *config.Config {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.cfg
}

// lookup returns the server of that name, if configured.
func (d *Daemon) lookup(name string) (*server, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, ok := d.servers[name]
	return s, ok
}

// serverNames returns the sorted names of the configured servers.
func (d *Daemon) serverNames() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.names)
}

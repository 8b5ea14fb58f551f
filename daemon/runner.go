package daemon

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Triggers of a probe, as the history records them.
const (
	triggerSchedule = "schedule"
	triggerRequest  = "request"
	triggerCalls    = "calls" // a scheduled probe that made the canary calls
	// triggerChange (watch.go): the server announced a change of its tools
)

// fire starts the probe of a due slot, unless the server left the
// configuration or changed schedule since (a stale slot), or its previous
// probe is still in flight (skipped: the next firing will try again). It
// returns the server's next slot; firings the daemon was too late for are
// skipped (nextAfter). Every skipped firing is counted, with its reason.
func (d *Daemon) fire(sl slot) (slot, bool) {
	if sl.calls {
		return d.fireCalls(sl)
	}
	d.mu.RLock()
	s, ok := d.servers[sl.name]
	if !ok || s.gen != sl.gen {
		d.mu.RUnlock()
		return slot{}, false
	}
	sched := s.sched
	stdio := s.cfg.Command != ""
	d.mu.RUnlock()

	now := time.Now()
	next := slot{due: nextAfter(sched, sl.due, now), name: sl.name, gen: sl.gen}
	hasNext := !next.due.IsZero()
	d.skipped(s, metrics.SkipLate, missedFirings(sched, sl.due, next.due, now), sl.due)

	f, busy := s.beginFlight(triggerSchedule)
	if f == nil {
		d.skipped(s, busy, 1, sl.due)
		return next, hasNext
	}
	// A goroutine only once the pool has room (startqueue.go).
	d.enqueue(s, f, sl.due, stdio)
	d.startQueued()
	return next, hasNext
}

// fireCalls starts the canary calls of a due call slot: a probe that lists
// the tools and calls the contracts of the slot's group in the same
// session, in the pool like any probe. Unlike a scheduled probe it waits
// for a probe of the same server that is still in flight (never two at
// once), since a skipped call would leave the tool unchecked for a whole
// call interval; a firing that finds the group's previous one still
// waiting is skipped, so each tool is called at most once per interval,
// and so is one that comes while a rate limit holds the server's calls
// (callpace.go): it is not retried on schedule.
func (d *Daemon) fireCalls(sl slot) (slot, bool) {
	d.mu.RLock()
	s, ok := d.servers[sl.name]
	if !ok || s.callGen != sl.gen || sl.group >= len(s.callGroups) {
		d.mu.RUnlock()
		return slot{}, false
	}
	g := s.callGroups[sl.group]
	d.mu.RUnlock()

	now := time.Now()
	next := slot{due: nextAfter(g.sched, sl.due, now), name: sl.name, gen: sl.gen, calls: true, group: sl.group}
	hasNext := !next.due.IsZero()
	d.skipped(s, metrics.SkipLate, missedFirings(g.sched, sl.due, next.due, now), sl.due)
	if until := s.heldUntil(); now.Before(until) {
		d.skipped(s, metrics.SkipCallsBackedOff, 1, sl.due)
		return next, hasNext
	}
	if !g.waiting.CompareAndSwap(false, true) {
		d.skipped(s, metrics.SkipCallsStillWaiting, 1, sl.due)
		return next, hasNext
	}
	if !d.enter() {
		g.waiting.Store(false)
		return slot{}, false
	}
	go func() {
		defer d.wg.Done()
		f := s.awaitFlight(s.ctx, triggerCalls)
		g.waiting.Store(false)
		if f == nil {
			return // the server or the daemon is going
		}
		res, recorded := d.probe(s.ctx, s, probeRun{trigger: triggerCalls, scheduled: sl.due, calls: true, group: &g})
		s.endFlight(f, res, recorded)
	}()
	return next, hasNext
}

// addCallSlots puts the first firing of each of s's call schedules in the
// timetable, within spread of now. Called with d.mu held.
func (d *Daemon) addCallSlots(s *server, now time.Time, spread time.Duration) {
	for i, g := range s.callGroups {
		d.table.add(slot{due: firstDue(g.sched, now, spread), name: s.name, gen: s.callGen, calls: true, group: i})
	}
}

// skipped counts n firings of s's schedule, the one due at due or those
// after it, that did not run, for reason (one of metrics.SkipReasons): in
// mcpwatch_probes_skipped_total, and in the server's own count (its page
// and the API). A firing skipped for want of a slot also warns, at most
// once every queueWarnEvery: the pool is too small for the fleet, which
// only the operator can change.
func (d *Daemon) skipped(s *server, reason string, n int, due time.Time) {
	if n <= 0 {
		return
	}
	d.self.ProbesSkipped(reason, n)
	s.mu.Lock()
	if reason == metrics.SkipCallsStillWaiting {
		s.callsSkipped += uint64(n)
	} else {
		s.skipped += uint64(n)
	}
	s.mu.Unlock()
	if reason == metrics.SkipStillQueued && d.queueWarn.allow(time.Now()) {
		d.mu.RLock()
		all, _ := d.pool.Sizes()
		d.mu.RUnlock()
		d.log.Warn("probes skipped: the previous probe of a server was still waiting for a free slot when its next one came due; "+
			"the pool is too small for the fleet: raise defaults.concurrency (see mcpwatch_probes_skipped_total)",
			zap.String("server", s.name), zap.Int("concurrency", all))
	}
	if ce := d.log.Check(zap.DebugLevel, "probe skipped"); ce != nil {
		ce.Write(zap.String("server", s.name), zap.String("reason", reason), zap.Int("firings", n), zap.Time("scheduled", due))
	}
}

// queueWarnEvery spaces the warnings of probes skipped for want of a slot.
const queueWarnEvery = 10 * time.Minute

// rateLimit lets one event through per period.
type rateLimit struct {
	mu     sync.Mutex
	period time.Duration
	last   time.Time
}

func (r *rateLimit) allow(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.period {
		return false
	}
	r.last = now
	return true
}

// enter counts a goroutine or request in for Close to wait on; false once
// the daemon is shutting down.
func (d *Daemon) enter() bool {
	d.enterMu.Lock()
	defer d.enterMu.Unlock()
	if d.closing {
		return false
	}
	d.wg.Add(1)
	return true
}

// probeRun says which probe of a server d.probe makes.
type probeRun struct {
	trigger string
	// scheduled is when the probe was due; zero for one nobody scheduled
	// (on demand, after an announced change), which yields its turn in the
	// pool to scheduled ones and adds no scheduling lag.
	scheduled time.Time
	// transcript records every message (an on-demand probe's debug
	// answer); calls makes the server's canary calls: group's, or all of
	// them when group is nil (a /probe that asks for them).
	transcript, calls bool
	group             *callGroup
	// waits, for a scheduled probe, ends its count among those waiting
	// for a slot, begun when it was queued (startqueue.go); nil counts it
	// in now.
	waits func()
	// deadline is when the requester stops waiting (a scrape's timeout,
	// less the offset); zero for none. The probe, its wait for a slot
	// included, ends by then.
	deadline time.Time
}

// probe runs one probe of s and records it. The caller holds s's flight.
// A probe canceled from outside (shutdown, the server removed, the
// request gone) or that never got a slot before its deadline is not the
// server's doing and is not recorded: recorded is false.
func (d *Daemon) probe(ctx context.Context, s *server, run probeRun) (*probe.Result, bool) {
	d.mu.RLock()
	cfg := s.cfg
	interval := s.interval
	if run.group != nil {
		cfg = forGroup(cfg, *run.group)
	}
	defaults := d.cfg.Defaults
	lockPath := d.cfg.Lock
	pool := d.pool
	d.mu.RUnlock()

	// Scheduled probes first (priority.go): an on-demand one asks the pool
	// only once no scheduled probe waits for a slot.
	var waited func()
	if run.scheduled.IsZero() {
		actx := ctx
		if !run.deadline.IsZero() {
			var cancel context.CancelFunc
			actx, cancel = context.WithDeadline(ctx, run.deadline)
			defer cancel()
		}
		gone, err := d.prio.admit(actx, func() int { all, _ := pool.Sizes(); return all })
		if err != nil {
			return nil, false
		}
		waited = gone
	} else if run.waits != nil {
		waited = run.waits
	} else {
		waited = d.prio.scheduledWaits()
	}
	defer waited() // a probe that never started

	live := d.liveFor(s, cfg, interval)
	if live != nil {
		defer d.releaseLive(s, live)
	}
	obs := d.opts.Probe(ctx, pool, cfg, runner.Request{
		// Fingerprints are computed as the result is recorded (see
		// retainedTools), whatever the lock.
		Era: s.rememberedEra(),
		Options: probe.Options{
			MaxMessageBytes: defaults.MaxMessageBytes,
			ClientVersion:   d.opts.Version,
			Transcript:      run.transcript,
			Conns:           d.conns,
		},
		Lookup:   d.opts.Lookup,
		Deadline: run.deadline,
		Timeout:  d.opts.Timeout,
		Warm:     s.isWarm(),
		OnStart: func() func() {
			s.flightRunning()
			slot := d.prio.started(waited)
			done := d.self.ProbeStarted(run.scheduled, time.Now())
			return func() { done(); slot() }
		},
		OAuth:        &d.oauth,
		Issuer:       d.issuers,
		Calls:        run.calls,
		Live:         live,
		RestartEvery: cfg.RestartAfter(interval),
	})
	res := obs.Result
	if ctx.Err() != nil || res.Reason == probe.ReasonCanceled {
		// Canceled from outside, or no slot before the requester's
		// deadline: not the server's doing, so not recorded against it.
		return res, false
	}
	lock := d.lock.current(lockPath)
	var round *callRound
	if run.calls {
		round = &callRound{outcomes: obs.Calls, auto: run.group == nil || run.group.auto}
		if g := run.group; g != nil {
			round.gap = typicalGap(g.sched, time.Now())
		}
	}
	t := s.recordResult(run.trigger, res, obs.Tools, lock, cfg.Forbid, round)
	if !d.opts.PerServerHistograms {
		d.self.ObserveOperations(res)
	}
	d.firstDone(s.name)
	d.considerWatch(s, cfg, res)

	// Checked first: at a fleet's probe rate, building fields that the
	// level then drops is measurable.
	if ce := d.log.Check(zap.DebugLevel, "probe finished"); ce != nil {
		ce.Write(zap.String("server", s.name), zap.String("trigger", run.trigger),
			zap.String("state", string(t.now.State)), zap.Bool("ok", res.OK), zap.String("reason", string(res.Reason)),
			zap.Int("tools", len(res.Tools)), zap.Duration("duration", res.Timings.Total))
	}
	if t.changed() {
		logTransition(d.log, s.name, t)
	}
	return res, true
}

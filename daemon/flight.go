package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// /probe is reachable by anyone who can reach the port, so it must not
// multiply work: every request for a server waits for the one probe of it
// in flight (scheduled or on demand) rather than start another, a server
// has at most Options.MaxProbeWaiters requests waiting and the daemon
// maxProbeRequests, on-demand probes take at most a quarter of the pool's
// slots at once (onDemandLimit), and a slot that frees goes to a scheduled
// probe waiting for one before any on-demand probe (priority.go). A request
// past a bound is answered 429 at once.

// maxProbeRequests bounds the /probe requests waiting in the whole daemon.
const maxProbeRequests = 256

// defaultMaxProbeWaiters is Options.MaxProbeWaiters' default.
const defaultMaxProbeWaiters = 16

// Errors of a /probe request turned away; both are 429.
var (
	errTooManyWaiters = errors.New("too many requests are waiting for this server's probe")
	errOnDemandFull   = errors.New("too many on-demand probes are running")
)

// Errors of a /probe request whose deadline (the scrape's timeout) passed
// before it had a result; both are 503.
var (
	errNoSlot       = errors.New("no probe slot was free before the scrape's deadline: the scheduled probes took them all")
	errProbeOverran = errors.New("the probe of this server already running (scheduled, or asked for by another request) did not end before the scrape's deadline; its result will be in /metrics")
)

// flight is one probe of a server in progress.
type flight struct {
	trigger    string
	started    time.Time // when it was registered
	transcript bool      // the result carries a transcript (on-demand probes)
	done       chan struct{}
	// cancel ends an on-demand probe once no request waits for it any
	// more; nil for a scheduled one, which runs to its end.
	cancel context.CancelFunc

	waiters int // guarded by server.mu
	// running is set once the probe has its slot in the pool (guarded by
	// server.mu): a firing skipped for it before then was skipped for want
	// of a slot.
	running bool

	// Set before done is closed.
	res      *probe.Result
	st       status.Server
	recorded bool
}

// beginFlight registers a probe of s about to start, or returns nil if one
// is in flight already, with why it is not done: still waiting for its
// slot in the pool (metrics.SkipStillQueued) or running
// (metrics.SkipStillRunning).
func (s *server) beginFlight(trigger string) (f *flight, busy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flight; f != nil {
		if f.running {
			return nil, metrics.SkipStillRunning
		}
		return nil, metrics.SkipStillQueued
	}
	s.flight = &flight{trigger: trigger, done: make(chan struct{}), started: time.Now()}
	return s.flight, ""
}

// flightRunning notes that the probe in flight has its slot.
func (s *server) flightRunning() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flight != nil {
		s.flight.running = true
	}
}

// endFlight hands the probe's outcome, and the server's status right after
// it, to every request waiting for it.
func (s *server) endFlight(f *flight, res *probe.Result, recorded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.res, f.st, f.recorded = res, s.status, recorded
	s.flight = nil
	close(f.done)
}

// waiters returns how many requests wait for the probe of s in flight (0
// without one).
func (s *server) waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flight == nil {
		return 0
	}
	return s.flight.waiters
}

// onDemandLimit is how many on-demand probes may run at once: a quarter of
// the pool, at least one.
func (d *Daemon) onDemandLimit() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	all, _ := d.pool.Sizes()
	return max(1, all/4)
}

// tryOnDemand takes one of the on-demand probes' turns, if one is free.
func (d *Daemon) tryOnDemand() bool {
	limit := int64(d.onDemandLimit())
	for {
		n := d.onDemand.Load()
		if n >= limit {
			return false
		}
		if d.onDemand.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// probeRequest answers a /probe request: it waits for the probe of s in
// flight, or starts one on demand (with a transcript), and returns its
// result and the server's status right after it. A request that leaves
// stops waiting; an on-demand probe no request waits for any more is
// canceled. errTooManyWaiters and errOnDemandFull turn the request away.
//
// deadline (zero: none) is when the requester stops waiting, as a
// Prometheus scrape's timeout says: a probe this request starts ends by
// then, its wait for a slot included (one cut there fails with reason
// timeout, as blackbox_exporter's probes do); a probe in flight that it
// joins is waited for until then, and errProbeOverran answers if it has
// not ended.
func (d *Daemon) probeRequest(ctx context.Context, s *server, deadline time.Time) (*flight, error) {
	if !d.enter() {
		return nil, ErrClosed
	}
	defer d.wg.Done()
	if d.probeRequests.Add(1) > maxProbeRequests {
		d.probeRequests.Add(-1)
		return nil, errTooManyWaiters
	}
	defer d.probeRequests.Add(-1)

	f, mine, err := d.joinOrStart(s, deadline)
	if err != nil {
		return nil, err
	}
	// A probe this request started ends by its deadline on its own; one it
	// joined was started for another, with a deadline of its own or none.
	var overran <-chan time.Time
	if !mine && !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		overran = timer.C
	}
	select {
	case <-f.done:
		switch {
		case f.recorded:
			return f, nil
		case f.res != nil && f.res.Reason == probe.ReasonCanceled && f.res.Error != "":
			return f, errors.New(f.res.Error) // it never got a slot
		case f.res == nil && mine && !deadline.IsZero() && !time.Now().Before(deadline):
			return f, errNoSlot
		}
		return f, errors.New("probe canceled before it ended")
	case <-overran:
		d.leave(s, f)
		return nil, errProbeOverran
	case <-ctx.Done():
		d.leave(s, f)
		return nil, ctx.Err()
	}
}

// leave counts a request out of the probe it waited for, and cancels an
// on-demand probe no request waits for any more.
func (d *Daemon) leave(s *server, f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.waiters--
	if f.waiters == 0 && f.cancel != nil {
		f.cancel()
	}
}

// joinOrStart counts the request in as a waiter of the probe of s in
// flight, or starts an on-demand probe of s for it, to end by deadline
// (zero: the server's timeout alone); mine says which.
func (d *Daemon) joinOrStart(s *server, deadline time.Time) (f *flight, mine bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flight; f != nil {
		if f.waiters >= d.opts.MaxProbeWaiters {
			return nil, false, errTooManyWaiters
		}
		f.waiters++
		return f, false, nil
	}
	if !d.tryOnDemand() {
		return nil, false, errOnDemandFull
	}
	if !d.enter() {
		d.onDemand.Add(-1)
		return nil, false, ErrClosed
	}
	// The probe ends with the server or the daemon, or when no request
	// waits for it any more.
	ctx, cancel := context.WithCancel(s.ctx)
	f = &flight{trigger: triggerRequest, transcript: true, done: make(chan struct{}), cancel: cancel, waiters: 1, started: time.Now()}
	s.flight = f
	go func() {
		defer d.wg.Done()
		defer d.onDemand.Add(-1)
		res, recorded := d.probe(ctx, s, probeRun{trigger: triggerRequest, transcript: true, deadline: deadline})
		cancel()
		s.endFlight(f, res, recorded)
	}()
	return f, true, nil
}

// retryAfter is the Retry-After of a /probe turned away: about when the
// probe of s in flight will have ended, at most its timeout.
func (d *Daemon) retryAfter(s *server) string {
	d.mu.RLock()
	timeout := s.probeTimeout(d.opts.Timeout)
	d.mu.RUnlock()
	return fmt.Sprint(max(1, int(timeout.Round(time.Second)/time.Second)))
}

// awaitFlight waits for the probe of s in flight, if any, to end, and
// registers the next one; nil when ctx ended first.
func (s *server) awaitFlight(ctx context.Context, trigger string) *flight {
	for {
		if f, _ := s.beginFlight(trigger); f != nil {
			return f
		}
		s.mu.Lock()
		var done chan struct{}
		if s.flight != nil {
			done = s.flight.done
		}
		s.mu.Unlock()
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-ctx.Done():
			return nil
		}
	}
}

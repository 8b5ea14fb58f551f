package daemon

// Watching for changes (watch_changes): for a remote server that announces
// changes of its tools (capabilities.tools.listChanged, or watch_changes:
// true), the daemon holds one listening stream (probe.Listen) and re-probes
// the server as soon as it announces one, instead of at its next scheduled
// probe; the schedule stays, as the backstop for a change never announced
// or a stream that is down.
//
//   - A listener starts after a successful probe (its era and transport are
//     what the stream speaks) and ends with the server, a change of what
//     reaches it, or watch_changes: false.
//   - A stream that ends is opened again after a backoff: 1 s doubling to
//     5 minutes, back to 1 s once a stream held a minute; a server with no
//     stream to offer (probe.ErrNoStream) is asked again every 5 minutes.
//   - A change probes at once, at most once a second per server: changes
//     announced meanwhile make one probe after it.
//   - A server that announces more than floodLimit changes within
//     floodWindow floods: each announcement costs reading and decoding, and
//     millions of them cost a core while causing one probe a second. The
//     daemon stops reading that stream, counts it
//     (mcpwatch_change_listener_floods_total), and listens again after the
//     longest backoff. A probe of the server
//     that started after the change is the probe for it; one that started
//     before is waited for, and followed by a fresh one.
//
// Each listener is one goroutine and one HTTP connection; a change probe
// is a goroutine while it runs.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// triggerChange is the trigger of a probe made because the server
// announced a change of its tools.
const triggerChange = "change"

const (
	// changeProbeGap is the least time between two change probes of one
	// server: a server announcing changes in a loop gets one probe a second.
	changeProbeGap = time.Second
	// listenBackoffMax bounds the wait before a stream is opened again.
	listenBackoffMax = 5 * time.Minute
	// listenHeld is how long a stream must have lived for the next
	// reconnect to wait the shortest backoff again.
	listenHeld = time.Minute
	// floodLimit changes announced within floodWindow stop the stream:
	// ten times the change probes they can cause.
	floodLimit  = 100
	floodWindow = 10 * time.Second
)

// watcher is the listening stream the daemon holds to one server.
type watcher struct {
	cancel context.CancelFunc

	mu            sync.Mutex // guards what follows
	lastChange    time.Time  // when the last change probe started
	pending       bool       // a change probe is waiting or running
	again         bool       // a change was announced while one was pending
	notifications uint64
	up            bool

	windowStart time.Time          // when the current flood window began
	inWindow    int                // changes announced in it
	flooded     bool               // the current stream was stopped for flooding
	floods      uint64             // streams stopped for flooding
	stopStream  context.CancelFunc // ends the current stream; nil between streams
}

// wantsWatch reports whether cfg asks for a listener given what its probes
// have shown: a remote server, watch_changes not false, and either
// watch_changes true or a server that declared tools.listChanged.
func wantsWatch(cfg config.Server, announces bool) bool {
	if cfg.URL == "" || cfg.WatchChanges != nil && !*cfg.WatchChanges {
		return false
	}
	return announces || cfg.WatchChanges != nil && *cfg.WatchChanges
}

// considerWatch starts the listener of s after a probe, when it wants one
// and has none.
func (d *Daemon) considerWatch(s *server, cfg config.Server, res *probe.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if res != nil && res.OK && res.AnnouncesChanges {
		s.announces = true
	}
	if s.watch != nil || s.status.LastOK == nil || !wantsWatch(cfg, s.announces) {
		return
	}
	if !d.enter() {
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	w := &watcher{cancel: cancel}
	s.watch = w
	s.status.Listener = &status.Listener{}
	go func() {
		defer d.wg.Done()
		d.listen(ctx, s, w)
	}()
}

// stopWatch ends the listener of s, if any. Called with s.mu held.
func (s *server) stopWatch() {
	if s.watch != nil {
		s.watch.cancel()
		s.watch = nil
	}
	s.status.Listener = nil
}

// publish copies the watcher's state into the server's status (a new
// Listener: a published one is never written). Called with w.mu held.
func (s *server) publish(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch == w {
		s.status.Listener = &status.Listener{Up: w.up, Notifications: w.notifications, Floods: w.floods}
	}
}

// listen holds the stream of w, opening it again after a backoff whenever
// it ends, until ctx does.
func (d *Daemon) listen(ctx context.Context, s *server, w *watcher) {
	log := d.log.With(zap.String("server", s.name))
	delay := time.Second
	var lastErr string
	for {
		d.mu.RLock()
		cfg, maxBytes := s.cfg, d.cfg.Defaults.MaxMessageBytes
		d.mu.RUnlock()
		s.mu.Lock()
		last := s.status.LastOK
		s.mu.Unlock()
		req := runner.ListenRequest{
			Transport: last.Transport, Era: last.Era, ProtocolVersion: last.ProtocolVersion,
			Options: probe.Options{MaxMessageBytes: maxBytes, ClientVersion: d.opts.Version},
			Lookup:  d.opts.Lookup,
			OAuth:   &d.oauth,
			Up: func() {
				w.mu.Lock()
				w.up = true
				s.publish(w)
				w.mu.Unlock()
				if lastErr != "" {
					log.Info("listening for tool changes again")
					lastErr = ""
				}
			},
		}
		start := time.Now()
		sctx, stop := context.WithCancel(ctx)
		w.mu.Lock()
		w.stopStream, w.flooded, w.inWindow = stop, false, 0
		w.mu.Unlock()
		err := runner.Listen(sctx, cfg, req, func() { d.changed(s, w) })
		stop()
		w.mu.Lock()
		w.up, w.stopStream = false, nil
		flooded := w.flooded
		s.publish(w)
		w.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) >= listenHeld {
			delay = time.Second
		}
		if errors.Is(err, probe.ErrNoStream) {
			delay = listenBackoffMax
		}
		if flooded {
			err, delay = errFlood, listenBackoffMax
		}
		// One line when the reason changes, not one per reconnect.
		if msg := sanitize.Text(errString(err)); msg != lastErr {
			log.Info("the listening stream for tool changes is down; the schedule still probes", zap.String("error", msg), zap.Duration("retry_in", delay))
			lastErr = msg
		}
		// ±20% jitter, so the listeners of a restarted server do not all
		// come back at once.
		wait := time.Duration(float64(delay) * (0.8 + 0.4*rand.Float64())) //nolint:gosec // jitter, not a secret
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		delay = min(2*delay, listenBackoffMax)
	}
}

// errFlood is why a stream that flooded was stopped.
var errFlood = errors.New("the server announced more than 100 changes of its tools within 10 seconds; stopped reading its stream")

func errString(err error) string {
	if err == nil {
		return "the stream ended"
	}
	return err.Error()
}

// changed is called by the stream for each change the server announces:
// it counts it, and probes the server (see changeProbe) unless a change
// probe is pending already, which then runs once more.
func (d *Daemon) changed(s *server, w *watcher) {
	w.mu.Lock()
	if w.flooded {
		w.mu.Unlock()
		return // stopped: what the stream still held is not read into anything
	}
	if now := time.Now(); now.Sub(w.windowStart) >= floodWindow {
		w.windowStart, w.inWindow = now, 0
	}
	w.inWindow++
	if w.inWindow > floodLimit {
		w.flooded = true
		w.floods++
		if w.stopStream != nil {
			w.stopStream()
		}
		s.publish(w)
		w.mu.Unlock()
		return
	}
	w.notifications++
	s.publish(w)
	start := !w.pending
	if start {
		w.pending = true
	} else {
		w.again = true
	}
	w.mu.Unlock()
	if !start || !d.enter() {
		return
	}
	at := time.Now()
	go func() {
		defer d.wg.Done()
		d.changeProbe(s, w, at)
	}()
}

// changeProbe probes s for a change announced at at, then again for the
// changes announced meanwhile, if any.
func (d *Daemon) changeProbe(s *server, w *watcher, at time.Time) {
	for {
		w.mu.Lock()
		wait := time.Until(w.lastChange.Add(changeProbeGap))
		w.mu.Unlock()
		if wait > 0 {
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		w.mu.Lock()
		w.lastChange, w.again = time.Now(), false
		w.mu.Unlock()

		d.probeFor(s, at)

		w.mu.Lock()
		if !w.again || s.ctx.Err() != nil {
			w.pending = false
			w.mu.Unlock()
			return
		}
		at = time.Now()
		w.mu.Unlock()
	}
}

// probeFor makes sure a probe of s that started after at ends: one in
// flight that started after it is that probe; one that started before is
// waited for, then a probe is made.
func (d *Daemon) probeFor(s *server, at time.Time) {
	for {
		s.mu.Lock()
		f := s.flight
		if f == nil {
			f = &flight{trigger: triggerChange, done: make(chan struct{}), started: time.Now()}
			s.flight = f
			s.mu.Unlock()
			res, recorded := d.probe(s.ctx, s, probeRun{trigger: triggerChange})
			s.endFlight(f, res, recorded)
			return
		}
		if !f.started.Before(at) {
			s.mu.Unlock()
			select {
			case <-s.ctx.Done():
			case <-f.done:
			}
			return
		}
		done := f.done
		s.mu.Unlock()
		select {
		case <-s.ctx.Done():
			return
		case <-done:
		}
	}
}

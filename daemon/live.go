package daemon

// Live stdio sessions (stdio_mode: live): the stdio servers the daemon
// keeps running between probes (probe.Live), so that a probe of one is a
// tools/list on it instead of a process start. At most
// defaults.live_sessions run at once: an npx server holds 50-85 MB of
// its own. A server past the cap is probed as in fresh mode, one
// process per probe; it takes the place of the session used least
// recently only when that one has been idle for longer than the server's
// own interval (a server probed hourly gives way to one probed every 30
// s, and servers of one schedule never take each other's places in turn,
// which would make every probe a start again).
//
// A change of its tools the running server announces is probed at once,
// as a listener's is (watch.go: one probe a second at most, a flood
// stopped). Its process ends when the server leaves the configuration,
// goes to fresh mode, or the daemon closes.

import (
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
)

// liveSessions are the live sessions of the daemon's servers.
type liveSessions struct {
	mu   sync.Mutex
	max  int
	held map[*server]*liveSession
	// orphans are sessions dropped as the daemon closed, with a probe
	// still on them: closeAll ends them.
	orphans []*probe.Live
}

// liveSession is one server's live session.
type liveSession struct {
	live *probe.Live
	used time.Time // when its last probe began
	// changes counts and paces the changes it announced (watch.go).
	changes *watcher
}

// setMax takes defaults.live_sessions; sessions over a lowered cap end
// after their next probe.
func (ls *liveSessions) setMax(n int) {
	ls.mu.Lock()
	ls.max = n
	ls.mu.Unlock()
}

// liveFor returns the live session of s for a probe that begins now,
// made when s has none and there is room; nil when s is probed with a
// process of its own (fresh mode, or every session taken).
func (d *Daemon) liveFor(s *server, cfg config.Server, interval time.Duration) *probe.Live {
	ls := &d.lives
	if cfg.Command == "" {
		return nil
	}
	if cfg.StdioMode != config.StdioLive {
		ls.drop(d, s) // a reload moved it to fresh mode
		return nil
	}
	now := time.Now()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if e := ls.held[s]; e != nil {
		e.used = now
		return e.live
	}
	if len(ls.held) >= ls.max && !ls.evictFor(now, interval) {
		return nil
	}
	if ls.held == nil {
		ls.held = map[*server]*liveSession{}
	}
	e := &liveSession{used: now, changes: &watcher{cancel: func() {}}}
	e.live = probe.NewLive(func() { d.changed(s, e.changes) })
	ls.held[s] = e
	return e.live
}

// evictFor ends the session used least recently, if it has been idle
// longer than interval (the schedule of the server that wants its place)
// and no probe runs on it. Called with ls.mu held.
func (ls *liveSessions) evictFor(now time.Time, interval time.Duration) bool {
	var (
		oldest *server
		at     time.Time
	)
	for s, e := range ls.held {
		if oldest == nil || e.used.Before(at) {
			oldest, at = s, e.used
		}
	}
	if oldest == nil || interval <= 0 || now.Sub(at) <= interval || !ls.held[oldest].live.TryClose() {
		return false
	}
	delete(ls.held, oldest)
	oldest.mu.Lock()
	if st := oldest.status.Stdio; st != nil && st.Live {
		ended := *st
		ended.Live = false
		oldest.status.Stdio = &ended
	}
	oldest.mu.Unlock()
	return true
}

// release follows a probe on live, s's session: a session whose server is
// not running (its probe failed) gives its place back, as does one over a
// lowered cap or one dropped while the probe ran.
func (d *Daemon) releaseLive(s *server, live *probe.Live) {
	ls := &d.lives
	ls.mu.Lock()
	e := ls.held[s]
	mine := e != nil && e.live == live
	if mine && (live.Started().IsZero() || len(ls.held) > ls.max) {
		delete(ls.held, s)
		mine = false
	}
	ls.mu.Unlock()
	if mine {
		e.changes.mu.Lock()
		if e.changes.flooded && time.Since(e.changes.windowStart) >= listenBackoffMax {
			// Heard again after the longest backoff, as a listener is.
			e.changes.flooded, e.changes.inWindow = false, 0
		}
		e.changes.mu.Unlock()
	}
	if !mine {
		live.Close()
	}
}

// drop ends s's session, if any, without waiting: a probe may be running
// on it (canceled with the server), which Close waits for.
func (ls *liveSessions) drop(d *Daemon, s *server) {
	ls.mu.Lock()
	e := ls.held[s]
	delete(ls.held, s)
	ls.mu.Unlock()
	if e == nil || e.live.TryClose() {
		return
	}
	if d.enter() {
		go func() {
			defer d.wg.Done()
			e.live.Close()
		}()
		return
	}
	ls.mu.Lock()
	ls.orphans = append(ls.orphans, e.live) // closing: closeAll ends it
	ls.mu.Unlock()
}

// closeAll ends every session, once no probe runs.
func (ls *liveSessions) closeAll() {
	ls.mu.Lock()
	held, orphans := ls.held, ls.orphans
	ls.held, ls.orphans = nil, nil
	ls.mu.Unlock()
	for _, e := range held {
		e.live.Close()
	}
	for _, l := range orphans {
		l.Close()
	}
}

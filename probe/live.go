package probe

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
	"time"
)

// A live session: a stdio server kept running between probes, so that a
// probe of it is a tools/list (and its canary calls) on the running
// process instead of a process start. Starting a Node server costs half a
// second of CPU and more through npx, a tools/list on it a few
// milliseconds (docs/performance.md has the figures).
//
// What a probe of a fresh start guarantees still holds: each probe has its
// one deadline, and a server that does not answer within it is killed with
// its whole process group; a probe that fails for any reason ends the
// server, and the next starts it afresh (era detection included). The
// server is also started afresh when it ended between probes, when what it
// is started with changed (its command, arguments, environment, folder: a
// rotated ${file:...} secret is a changed environment), and once it has
// run for the restart interval, so that a server that no longer starts
// (a revoked key some servers exit on at start) is seen within it.

// Live keeps one stdio server running between probes. Its zero value is
// not usable: make one with NewLive, probe with Run, and Close it when the
// server is no longer watched. One probe runs on it at a time.
type Live struct {
	onChange func()
	idle     *observer        // hears the server between probes
	now      func() time.Time // the clock restart_every is counted by

	mu      sync.Mutex // held by Run and Close
	c       *stdioConn // nil: none running
	key     [sha256.Size]byte
	facts   Result // era, version, server info of the running server
	started time.Time
	next    StartReason // why the next start will be, when none runs
}

// NewLive returns a Live with no server running yet. onListChanged, when
// set, is called each time the running server announces a change of its
// tools (notifications/tools/list_changed) between probes, so the caller
// can probe it at once; it must not block. A change announced during a
// probe makes that probe read the list again, as Run does.
func NewLive(onListChanged func()) *Live {
	l := &Live{onChange: onListChanged, next: StartFirst, now: time.Now}
	l.idle = &observer{start: time.Now(), onListChanged: onListChanged}
	return l
}

// Started returns when the running server started; zero when none runs.
func (l *Live) Started() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return time.Time{}
	}
	return l.started
}

// TryClose ends the running server, if any, unless a probe runs on the
// Live now; it reports whether the Live is closed.
func (l *Live) TryClose() bool {
	if !l.mu.TryLock() {
		return false
	}
	defer l.mu.Unlock()
	l.end(StartFirst)
	return true
}

// Close ends the running server, if any, with its process group, waiting
// for a probe running on it to end first.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end(StartFirst)
}

// end closes the running server; the next start will be for why.
func (l *Live) end(why StartReason) {
	if l.c != nil {
		l.c.close(context.Background())
		l.c = nil
	}
	l.next = why
}

// Run probes t (a stdio server: a target with a command) within ctx as
// the package's Run does, on the server l keeps running when there is one
// started from the same target, and not running for restartEvery or longer
// (zero: no limit): the probe is then tools/list, and opts.AfterList's
// calls, on it. Otherwise it starts the server, and keeps it running
// after a probe that succeeded. A probe that fails ends it. A target
// without a command is probed as Run does, and nothing is kept.
func (l *Live) Run(ctx context.Context, t Target, opts Options, restartEvery time.Duration) *Result {
	if t.Command == "" {
		return Run(ctx, t, opts)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := targetKey(t)
	if l.c != nil {
		switch {
		case l.c.dead():
			l.end(StartExited)
		case key != l.key:
			l.end(StartChanged)
		case restartEvery > 0 && l.now().Sub(l.started) >= restartEvery:
			l.end(StartRenewed)
		}
	}
	if l.c != nil {
		return l.onRunning(ctx, opts)
	}
	return l.start(ctx, t, opts, key)
}

// start probes t on a server it starts, and keeps the server when the
// probe succeeded.
func (l *Live) start(ctx context.Context, t Target, opts Options, key [sha256.Size]byte) *Result {
	why := l.next
	res := runSession(ctx, opts, func(s *session) error {
		s.keep = true
		err := s.probe(ctx, t)
		if c := s.kept; c != nil {
			// Kept only if the probe's deadline has not begun to kill it.
			if c.stopKill() {
				c.stopKill = func() bool { return false }
				c.observed.Store(l.idle)
				l.c, l.key, l.started = c, key, l.now().Add(-time.Since(c.spawned))
			} else {
				c.close(ctx)
			}
		}
		return err
	})
	if l.c != nil {
		l.facts = Result{Era: res.Era, ProtocolVersion: res.ProtocolVersion, ServerName: res.ServerName,
			ServerVersion: res.ServerVersion, AnnouncesChanges: res.AnnouncesChanges}
		res.Session = &Session{Started: l.started, Start: why, Kept: true}
		return res
	}
	if res.Reason == ReasonConfig || res.Reason == ReasonSpawnFailed {
		return res // nothing ran: the next start is for the same reason
	}
	l.next = StartFailed
	res.Session = &Session{Started: res.Started, Start: why}
	return res
}

// onRunning probes the running server: tools/list and the calls, under
// ctx, whose end kills it.
func (l *Live) onRunning(ctx context.Context, opts Options) *Result {
	c := l.c
	res := runSession(ctx, opts, func(s *session) error {
		f := &l.facts
		s.res.Transport = TransportStdio
		s.res.Era, s.res.ProtocolVersion, s.res.ServerName, s.res.ServerVersion = f.Era, f.ProtocolVersion, f.ServerName, f.ServerVersion
		s.res.AnnouncesChanges = f.AnnouncesChanges
		var meta *requestMeta
		if f.Era == EraModern {
			meta = s.meta(f.ProtocolVersion)
		}
		c.observed.Store(s.obs)
		kill := context.AfterFunc(ctx, c.stop)
		err := s.listTools(ctx, c, meta)
		killed := !kill()
		c.observed.Store(l.idle)
		if err != nil || killed {
			l.end(StartFailed) // killed and reaped: its stderr is all there
		}
		s.res.StderrTail = c.stderrStartAndTail()
		return err
	})
	res.Session = &Session{Started: l.started, Kept: l.c != nil}
	return res
}

// liveKey keys the HMAC of targetKey: made at random once per process, so
// a key tells two targets apart and says nothing of the secrets in them,
// which are hashed with it and never kept.
var liveKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}()

// targetKey identifies what a stdio server is started with: its command,
// arguments, environment (its own variables and whether it inherits
// mcpwatch's), and folder.
func targetKey(t Target) [sha256.Size]byte {
	m := hmac.New(sha256.New, liveKey)
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		m.Write(n[:])
		m.Write([]byte(s))
	}
	field(t.Command)
	field(t.Dir)
	if t.InheritEnv {
		field("inherit")
	} else {
		field("minimal")
	}
	for _, a := range t.Args {
		field("arg")
		field(a)
	}
	names := make([]string, 0, len(t.Env))
	for k := range t.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		field("env")
		field(k)
		field(t.Env[k])
	}
	var out [sha256.Size]byte
	copy(out[:], m.Sum(nil))
	return out
}

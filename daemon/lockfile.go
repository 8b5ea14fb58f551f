package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
)

// lockFile is the lock as last read from disk. It is re-read when the
// file's identity, size or modification time changes, so a lock updated by
// `mcpwatch lock` (an atomic rename) is picked up within a second
// (watchLock) without a reload; a probe takes the lock as last read
// (current), so that a fleet's hundreds of probes a second cost no look at
// the file each. A lock file that goes
// missing means no entries; one that cannot be parsed leaves the last good
// one in force. Every look is exported (mcpwatch_lock_last_read_*): a
// missing or broken file is a failure.
type lockFile struct {
	log  *zap.Logger
	self *metrics.Daemon // mcpwatch_lock_last_read_*

	mu     sync.Mutex
	path   string
	seen   os.FileInfo // the stat of the file last read or tried; nil if none
	seenOK bool        // seen was read and parsed
	absent bool        // the file did not exist at the last look
	lock   *lockstore.Lock
	health lockHealth
	// reported is whether the outcome for path was exported yet.
	reported bool
}

// lockHealth is the outcome of the last look at the lock file, for the
// status page's banner: Err is empty when it read (or there is no lock).
type lockHealth struct {
	Path string
	Err  string
	// Since is when the file started failing.
	Since time.Time
}

func newLockFile(log *zap.Logger, self *metrics.Daemon) *lockFile {
	return &lockFile{log: log, self: self}
}

// status returns the outcome of the last look at the lock file.
func (l *lockFile) status() lockHealth {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.health
}

// succeeded and failed record the outcome of a look at the file; called
// with l.mu held. A failure keeps the time it started.
func (l *lockFile) succeeded() {
	l.health, l.reported = lockHealth{Path: l.path}, true
	l.self.LockReadSucceeded(time.Now())
}

func (l *lockFile) failed(err string) {
	if l.health.Err == "" {
		l.health.Since = time.Now()
	}
	l.health.Path, l.health.Err, l.reported = l.path, err, true
	l.self.LockReadFailed()
}

// current returns the lock as last read from path, and reads it only when
// nothing was read from path yet.
func (l *lockFile) current(path string) *lockstore.Lock {
	l.mu.Lock()
	if path == l.path && l.reported {
		defer l.mu.Unlock()
		return l.lock
	}
	l.mu.Unlock()
	return l.get(path)
}

// get returns the lock at path (nil when there is none), looking at the
// file now. A changed path, after a reload, starts afresh.
func (l *lockFile) get(path string) *lockstore.Lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if path != l.path {
		l.path, l.seen, l.absent, l.lock = path, nil, false, nil
		l.health, l.reported = lockHealth{}, false
	}
	if path == "" {
		if !l.reported {
			l.succeeded() // nothing to read is no failure
		}
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !l.absent {
			l.log.Warn("lock file not found: no server has locked tools until it is written (run 'mcpwatch lock')",
				zap.String("lock", path))
		}
		l.absent, l.seen, l.seenOK, l.lock = true, nil, false, nil
		l.failed("lock file not found: no server has locked tools until it is written (run 'mcpwatch lock')")
		return nil
	case err != nil:
		l.log.Error("cannot stat the lock file; keeping the last one read", zap.String("lock", path), zap.Error(err))
		l.failed(err.Error())
		return l.lock
	}
	l.absent = false
	if l.seen != nil && sameFile(l.seen, fi) {
		if l.seenOK && l.health.Err != "" {
			l.succeeded() // a failed stat, then the same good file
		}
		return l.lock
	}
	l.seen, l.seenOK = fi, false
	lock, err := lockstore.Read(path)
	if err != nil {
		// Logged once per version of the file: seen now matches it.
		l.log.Error("cannot read the lock file; keeping the last good one until it is fixed",
			zap.String("lock", path), zap.Error(err))
		l.failed(err.Error())
		return l.lock
	}
	l.seenOK = true
	l.succeeded()
	if l.lock != nil {
		l.log.Info("lock file changed; reloaded", zap.String("lock", path))
	}
	l.lock = lock
	return lock
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// lockCheckInterval is how often the lock file is looked at between probes.
const lockCheckInterval = time.Second

// watchLock compares every server with the lock again whenever the lock
// file changes, until ctx ends: a tool or server taken out of the lock must
// leave no stale series until the next probe, which a cron schedule may put
// hours away.
func (d *Daemon) watchLock(ctx context.Context) {
	tick := time.NewTicker(lockCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			d.relockAll()
		}
	}
}

// relockAll compares every server with the lock as it is on disk now. It
// visits the servers only when there may be one not compared with that lock
// (the lock changed, a reload added servers, a probe recorded an older
// lock): with the lock unchanged it costs the look at the file, not a visit
// of each server's mutex (12% of a 100,000-server replica's CPU when it
// took them all every second).
func (d *Daemon) relockAll() {
	lock := d.lock.get(d.Config().Lock) // disk, before taking d.mu
	if !d.relocks.due(lock) {
		return
	}
	type target struct {
		s      *server
		forbid []string
	}
	d.mu.RLock()
	targets := make([]target, 0, len(d.names))
	for _, name := range d.names {
		s := d.servers[name]
		targets = append(targets, target{s, s.cfg.Forbid})
	}
	d.mu.RUnlock()
	// Compared outside d.mu: a lock that gained fingerprints has them
	// computed, which must not hold up a reload.
	for _, t := range targets {
		d.relocks.visits.Add(1)
		if tr, judged := t.s.relock(lock, t.forbid); judged && tr.changed() {
			logTransition(d.log, t.s.name, tr)
		}
	}
}

// relocks tells relockAll whether a visit of every server is due: once
// every server was compared with a lock, none needs comparing with it
// again until something makes a server's lock another one.
type relocks struct {
	// latest is the lock every server was last compared with, or is being
	// compared with now.
	latest atomic.Pointer[lockstore.Lock]
	// stale is set when a server may hold another lock than latest since
	// the last visit began: servers added by a reload (compared with the
	// lock as the reload read it), a probe recorded with a lock read before
	// latest was.
	stale atomic.Bool
	// visits counts the servers relockAll visited, for tests.
	visits atomic.Uint64
}

// due reports whether the servers must be visited to compare them with
// lock, and if so makes lock the latest: a probe that records another
// after this marks the servers stale (recorded), which the next check
// visits.
func (r *relocks) due(lock *lockstore.Lock) bool {
	stale := r.stale.Swap(false)
	if r.latest.Load() == lock && !stale {
		return false
	}
	r.latest.Store(lock)
	return true
}

// recorded notes that a server recorded a probe with lock: one read before
// the latest has the servers visited again.
func (r *relocks) recorded(lock *lockstore.Lock) {
	if r != nil && r.latest.Load() != lock {
		r.stale.Store(true)
	}
}

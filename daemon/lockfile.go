package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/lockstore"
)

// lockFile is the lock as last read from disk. It is re-read when the
// file's identity, size or modification time changes, so a lock updated by
// `mcpwatch lock` (an atomic rename) is picked up within a second
// (watchLock), and by every probe, without a reload. A lock file that goes
// missing means no entries; one that cannot be parsed leaves the last good
// one in force.
type lockFile struct {
	log *zap.Logger

	mu     sync.Mutex
	path   string
	seen   os.FileInfo // the stat of the file last read or tried; nil if none
	absent bool        // the file did not exist at the last look
	lock   *lockstore.Lock
}

func newLockFile(log *zap.Logger) *lockFile { return &lockFile{log: log} }

// get returns the lock at path (nil when there is none). A changed path,
// after a reload, starts afresh.
func (l *lockFile) get(path string) *lockstore.Lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if path != l.path {
		l.path, l.seen, l.absent, l.lock = path, nil, false, nil
	}
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !l.absent {
			l.log.Warn("lock file not found: no server has locked tools until it is written (run 'mcpwatch lock')",
				zap.String("lock", path))
		}
		l.absent, l.seen, l.lock = true, nil, nil
		return nil
	case err != nil:
		l.log.Error("cannot stat the lock file; keeping the last one read", zap.String("lock", path), zap.Error(err))
		return l.lock
	}
	l.absent = false
	if l.seen != nil && sameFile(l.seen, fi) {
		return l.lock
	}
	l.seen = fi
	lock, err := lockstore.Read(path)
	if err != nil {
		// Logged once per version of the file: seen now matches it.
		l.log.Error("cannot read the lock file; keeping the last good one until it is fixed",
			zap.String("lock", path), zap.Error(err))
		return l.lock
	}
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

// relockAll compares every server with the lock as it is on disk now; a
// server already compared with it costs a pointer comparison.
func (d *Daemon) relockAll() {
	lock := d.lock.get(d.Config().Lock) // disk, before taking d.mu
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
		if tr, judged := t.s.relock(lock, t.forbid); judged && tr.changed() {
			logTransition(d.log, t.s.name, tr)
		}
	}
}

package daemon

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/lockstore"
)

// lockFile is the lock as last read from disk. It is re-read when the
// file's identity, size or modification time changes, so a lock updated by
// `mcpwatch lock` (an atomic rename) is picked up at the next probe without
// a reload. A lock file that goes missing means no entries; one that cannot
// be parsed leaves the last good one in force.
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

// entry returns the server's lock entry, if the lock has one.
func (l *lockFile) entry(path, server string) (lockstore.Entry, bool) {
	lock := l.get(path)
	if lock == nil {
		return lockstore.Entry{}, false
	}
	return lock.Entry(server)
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

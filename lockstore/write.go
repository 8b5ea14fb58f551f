package lockstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the lock file atomically: a temp file in the same directory,
// fsync, close, rename over the old file, fsync the directory. Until the
// rename, any failure leaves the old file exactly as it was and removes the
// temp file; readers only ever see the old lock or the new one. The new file
// keeps the old one's permissions (0644 for a new file), and a symlinked lock
// is written through the link, so the link survives.
func Write(path string, l *Lock) error {
	return writeAtomic(path, l.Marshal(), osFS{})
}

// fileSystem is the few operations writeAtomic makes that a test must be able
// to fail on purpose (a full disk, an I/O error on fsync).
type fileSystem interface {
	syncFile(f *os.File) error
	rename(from, to string) error
	syncDir(dir string) error
}

type osFS struct{}

func (osFS) syncFile(f *os.File) error    { return f.Sync() }
func (osFS) rename(from, to string) error { return os.Rename(from, to) }
func (osFS) syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func writeAtomic(path string, data []byte, fsys fileSystem) (err error) {
	target, perm, err := writeTarget(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write lock file %s: create temp file: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()           // may already be closed; the error is not the news
			os.Remove(tmp.Name()) // leave nothing behind
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write lock file %s: set permissions: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write lock file %s: %w", path, err)
	}
	if err := fsys.syncFile(tmp); err != nil {
		return fmt.Errorf("write lock file %s: fsync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write lock file %s: close: %w", path, err)
	}
	if err := fsys.rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write lock file %s: rename into place: %w", path, err)
	}
	// The new lock is in place; only its durability across a crash is
	// uncertain if this fails, so say so rather than claim the old one stays.
	if err := fsys.syncDir(dir); err != nil {
		return fmt.Errorf("wrote lock file %s but could not fsync its directory (it may not survive a crash): %w", path, err)
	}
	return nil
}

// writeTarget resolves a symlinked lock to the file it points to and reads
// the permissions to keep.
func writeTarget(path string) (target string, perm fs.FileMode, err error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, 0o644, nil
	case err != nil:
		return "", 0, fmt.Errorf("write lock file %s: %w", path, err)
	case !info.Mode().IsRegular():
		return "", 0, fmt.Errorf("write lock file %s: not a regular file (%s); point --lock.file at a file", path, info.Mode().Type())
	}
	target, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, fmt.Errorf("write lock file %s: resolve symlink: %w", path, err)
	}
	return target, info.Mode().Perm(), nil
}

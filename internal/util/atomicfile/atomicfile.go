// Package atomicfile replaces files so that a reader only ever sees the old
// content or the new, never a half-written file: locks, receipts, reports,
// caches and rotated secrets all go through it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write replaces the file at path with data atomically, for any file
// mcpwatch writes (locks, receipts, reports): a temp file in the same
// directory, fsync, close, rename over the old file, fsync the directory.
// Until the rename, any failure leaves the old file exactly as it was and
// removes the temp file; readers only ever see the old file or the new
// one. Temp files of earlier writes that were killed before they could
// clean up are swept first (see sweepTemps). The new file keeps the old one's permissions (0644 for a new file),
// and a symlinked file is written through the link, so the link survives.
// Errors name the file.
func Write(path string, data []byte) error {
	return writeAtomic(path, path, data, osFS{})
}

// WriteNamed is Write with errors calling the file name ("lock file
// mcp-tools.lock.json") rather than its bare path.
func WriteNamed(path, name string, data []byte) error {
	return writeAtomic(path, name, data, osFS{})
}

// WriteSecret is Write for a secret (a refresh token, a registered OAuth
// client): the new file is mode 0600 whatever the old one's was, and it is
// never written through a symlink. A link at path is replaced by the file
// itself (the rename replaces the directory entry, not what it points at),
// so a value a server chose can never land in, or change the mode of, a
// file the link leads to.
func WriteSecret(path string, data []byte) error {
	return writeAtomicOpts(path, path, data, osFS{}, 0o600, false)
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
	d, err := os.Open(dir) //nolint:gosec // G304: the directory of the lock file being written
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }() // opened to fsync, read-only
	return d.Sync()
}

// writeAtomic writes data to path; name is how errors call the file
// ("lock file mcp-tools.lock.json").
func writeAtomic(path, name string, data []byte, fsys fileSystem) error {
	return writeAtomicPerm(path, name, data, fsys, 0)
}

// writeAtomicPerm is writeAtomic with the new file's mode forced to perm
// (0 keeps the old file's).
func writeAtomicPerm(path, name string, data []byte, fsys fileSystem, force fs.FileMode) error {
	return writeAtomicOpts(path, name, data, fsys, force, true)
}

// writeAtomicOpts is writeAtomicPerm; follow says whether a symlink at path
// is written through (its target replaced) or replaced itself.
func writeAtomicOpts(path, name string, data []byte, fsys fileSystem, force fs.FileMode, follow bool) (err error) {
	target, perm, err := writeTarget(path, name, follow)
	if err != nil {
		return err
	}
	if force != 0 {
		perm = force
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	sweepTemps(dir, base, time.Now())
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("write %s: create temp file: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()           // may already be closed; the error is not the news
			_ = os.Remove(tmp.Name()) // leave nothing behind
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: set permissions: %w", name, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := fsys.syncFile(tmp); err != nil {
		return fmt.Errorf("write %s: fsync: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", name, err)
	}
	if err := fsys.rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: rename into place: %w", name, err)
	}
	// The new file is in place; only its durability across a crash is
	// uncertain if this fails, so say so rather than claim the old one stays.
	if err := fsys.syncDir(dir); err != nil {
		return fmt.Errorf("wrote %s but could not fsync its directory (it may not survive a crash): %w", name, err)
	}
	return nil
}

// tempPrefix is how the temp files of writes to base begin; os.CreateTemp
// appends a random decimal number.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// staleTempAge is the age from which a temp file of ours is known to be
// left by a write that never finished: a write takes milliseconds (seconds
// on a slow disk's fsync), and only a process killed mid-write (kill -9,
// power loss) leaves its temp file behind, since every failure removes it.
const staleTempAge = 10 * time.Minute

// SweepTemps removes the stale temp files that writes to path killed
// half-way left behind (see sweepTemps), for a caller that may end without
// writing (mcpwatch lock with nothing to change). Write does it itself.
func SweepTemps(path string) {
	target, _, err := writeTarget(path, path, true)
	if err != nil {
		return
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	sweepTemps(dir, base, time.Now())
}

// sweepTemps removes the temp files that earlier writes to base in dir left
// behind when they were killed: only files named as writeAtomic names them
// ("."+base+".tmp-" and digits), regular files (never a link or a
// directory), and only those unmodified for staleTempAge, so a write
// running now in another process keeps its file. It is best effort: a file
// it cannot look at or remove is left, and the write goes on.
func sweepTemps(dir, base string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		name := e.Name()
		suffix, ok := strings.CutPrefix(name, prefix)
		if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < staleTempAge {
			continue
		}
		_ = os.Remove(filepath.Join(dir, name)) // best effort: see above
	}
}

// writeTarget resolves a symlinked file to the file it points to (unless
// follow is false: then the link itself is the file to replace) and reads
// the permissions to keep.
func writeTarget(path, name string, follow bool) (target string, perm fs.FileMode, err error) {
	if !follow {
		info, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return path, 0o644, nil
		case err != nil:
			return "", 0, fmt.Errorf("write %s: %w", name, err)
		case info.Mode()&fs.ModeSymlink != 0:
			return path, 0o644, nil
		case !info.Mode().IsRegular():
			return "", 0, fmt.Errorf("write %s: not a regular file (%s); give the path of a file", name, info.Mode().Type())
		}
		return path, info.Mode().Perm(), nil
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, 0o644, nil
	case err != nil:
		return "", 0, fmt.Errorf("write %s: %w", name, err)
	case !info.Mode().IsRegular():
		return "", 0, fmt.Errorf("write %s: not a regular file (%s); give the path of a file", name, info.Mode().Type())
	}
	target, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, fmt.Errorf("write %s: resolve symlink: %w", name, err)
	}
	return target, info.Mode().Perm(), nil
}

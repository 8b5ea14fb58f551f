// Package readfile reads the files mcpwatch is pointed at: the
// configuration and the client configs it imports, contracts files, secret
// and env files, the lock, the era cache. A path in a configuration may
// name anything, so each read is bounded three ways:
//
//   - only a regular file is read: a named pipe would block the open (and
//     every later probe, reload and shutdown) until some writer came, and
//     a device such as /dev/zero never ends;
//   - at most a limit the caller gives, the error naming it;
//   - within Timeout: a file system that stops answering (a hung network
//     mount) fails the read instead of the command, and a second read of
//     the same file fails at once while the first is still stuck.
//
// It imports nothing of ours, so any package may use it.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// timeout bounds one read, from the open to the last byte.
const timeout = 10 * time.Second

// ErrNotRegular is the error (wrapped in an *fs.PathError) for a path that
// names a named pipe, a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the error (wrapped) for a file larger than its limit.
var ErrTooLarge = errors.New("too large")

// ErrStalled is the error (wrapped) for a read that did not end within
// Timeout, or of a file whose last read has not ended yet.
var ErrStalled = errors.New("the file system did not answer")

// Read returns the content of the regular file at path, at most limit
// bytes. Its errors are *fs.PathError, so errors.Is tells fs.ErrNotExist,
// ErrNotRegular, ErrTooLarge and ErrStalled apart, and the message names
// what is wrong ("a named pipe, not a regular file", "larger than the
// limit of 1 MiB").
func Read(path string, limit int64) ([]byte, error) {
	return readBounded(path, limit, nil)
}

// ErrNotPrivate is the error (wrapped) for a file ReadPrivate refuses.
var ErrNotPrivate = errors.New("not private")

// ReadPrivate is Read for a file that holds what another user must not
// choose: the client mcpwatch login kept beside a refresh token. As ssh
// does for its keys and configuration, it refuses a file that is not the
// user's own or that others may write (a file planted in a shared
// directory, mode 0644 in a 1777 /tmp, would make mcpwatch send the
// refresh token as a client another user picked). The check is on the
// file opened, so a rename in between cannot slip another one in.
func ReadPrivate(path string, limit int64) ([]byte, error) {
	return readBounded(path, limit, private)
}

// private refuses a file not owned by this process's user, or writable by
// its group or by others.
func private(info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil // not a Unix file system's: nothing to tell
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return notPrivateError{fmt.Sprintf("owned by uid %d, not by this user (uid %d)", st.Uid, uid)}
	}
	if info.Mode().Perm()&0o022 != 0 {
		return notPrivateError{fmt.Sprintf("writable by others (mode %04o)", info.Mode().Perm())}
	}
	return nil
}

type notPrivateError struct{ why string }

func (e notPrivateError) Error() string {
	return e.why + "; it must be the user's own and writable by no one else (chmod go-w)"
}

func (notPrivateError) Is(target error) bool { return target == ErrNotPrivate }

func readBounded(path string, limit int64, check func(fs.FileInfo) error) ([]byte, error) {
	if _, busy := stalled.Load(path); busy {
		return nil, &fs.PathError{Op: "read", Path: path, Err: stalledError{again: true}}
	}
	done := make(chan result, 1)
	go func() {
		b, err := read(path, limit, check)
		done <- result{b, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.data, r.err
	case <-timer.C:
		// The goroutine stays in its system call until the file system
		// answers; until then, reads of this file fail at once rather
		// than pile up.
		stalled.Store(path, true)
		go func() {
			<-done
			stalled.Delete(path)
		}()
		return nil, &fs.PathError{Op: "read", Path: path, Err: stalledError{}}
	}
}

// stalled holds the paths whose read outlived Timeout and has not ended.
var stalled sync.Map

type result struct {
	data []byte
	err  error
}

// read is the read itself; a test replaces it to stall.
var read = func(path string, limit int64, check func(fs.FileInfo) error) ([]byte, error) {
	f, info, err := open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	if check != nil {
		if err := check(info); err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
	}
	if info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError{limit}}
	}
	// The size can grow while the file is read: the limit bounds the read too.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError{limit}}
	}
	return data, nil
}

// Open opens the regular file at path for reading, and refuses anything
// else without blocking: it opens non-blocking (a named pipe without a
// writer would block a plain open for ever) and looks at what it opened.
// The caller bounds what it reads.
func Open(path string) (*os.File, error) {
	f, _, err := open(path)
	return f, err
}

func open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) //nolint:gosec // G304: every caller reads a file the operator's configuration names
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: notRegularError{info.Mode()}}
	}
	return f, info, nil
}

type notRegularError struct{ mode fs.FileMode }

func (e notRegularError) Error() string {
	kind := "not a file"
	switch m := e.mode; {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m.IsDir():
		kind = "a directory"
	}
	return kind + ", not a regular file"
}

func (notRegularError) Is(target error) bool { return target == ErrNotRegular }

type tooLargeError struct{ limit int64 }

func (e tooLargeError) Error() string { return "larger than the limit of " + size(e.limit) }

func (tooLargeError) Is(target error) bool { return target == ErrTooLarge }

type stalledError struct{ again bool }

func (e stalledError) Error() string {
	if e.again {
		return "an earlier read of it has not ended yet: the file system does not answer"
	}
	return fmt.Sprintf("no answer within %s: the file system does not answer", timeout)
}

func (stalledError) Is(target error) bool { return target == ErrStalled }

// size writes a byte count as a person reads a limit: "1 MiB", "512 KiB",
// "100 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

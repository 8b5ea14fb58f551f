// Package memlimit gives the Go runtime a soft memory limit (what
// GOMEMLIMIT sets) for mcpwatch serve: by default a fraction of the memory
// limit of the cgroup mcpwatch runs in, so that a daemon in a container
// or a systemd unit with MemoryMax collects its garbage harder as it nears
// the limit, instead of growing its heap to twice the live data and being
// killed for it. The Go runtime reads no cgroup limit by itself.
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupShare is the part of the cgroup's limit the Go runtime's soft
// limit takes: the rest is for what the runtime does not count (thread
// stacks, the kernel's socket buffers, fragmentation), so the soft limit
// is reached before the hard one.
const cgroupShare = 0.9

// noLimit is a cgroup v1 limit this large or larger: none (v1 writes
// 9223372036854771712 for "max").
const noLimit = 1 << 62

// Values of the flag besides a size.
const (
	Auto = "auto" // from GOMEMLIMIT if set, else from the cgroup, else none
	Off  = "off"  // no limit, even under a cgroup's
)

// Setting is the limit chosen and where it came from, for the log.
type Setting struct {
	Bytes  int64  // 0: no limit
	Source string // "--memory.limit", "GOMEMLIMIT", the cgroup file it was read from, or "none"
}

// Choose decides the limit for the flag's value (Auto, Off or a size:
// 400MiB, 1GiB, 524288000), given GOMEMLIMIT's value (goMemLimit, "" when
// unset) and the root of the file system the cgroup files are read under
// ("/"; tests pass another). parseSize reads a size: bytesize.Parse, which
// the caller passes since a leaf helper imports nothing of mcpwatch's.
func Choose(flag, goMemLimit, root string, parseSize func(string) (int64, error)) (Setting, error) {
	switch flag {
	case Off:
		return Setting{Source: "--memory.limit=off"}, nil
	case Auto, "":
	default:
		n, err := parseSize(flag)
		if err != nil {
			return Setting{}, fmt.Errorf("--memory.limit %q: %w; write auto, off or a size such as 400MiB", flag, err)
		}
		return Setting{Bytes: n, Source: "--memory.limit"}, nil
	}
	if goMemLimit != "" {
		// The runtime read it at start; it stands.
		n, _ := parseSize(goMemLimit)
		return Setting{Bytes: n, Source: "GOMEMLIMIT"}, nil
	}
	limit, file, err := Cgroup(root)
	if err != nil || limit == 0 {
		return Setting{Source: "none"}, err
	}
	return Setting{Bytes: int64(float64(limit) * cgroupShare), Source: file}, nil
}

// Apply sets the runtime's soft memory limit to s (none: no limit), unless
// it came from GOMEMLIMIT, which the runtime applied already.
func Apply(s Setting) {
	if s.Source == "GOMEMLIMIT" {
		return
	}
	if s.Bytes > 0 {
		debug.SetMemoryLimit(s.Bytes)
		return
	}
	debug.SetMemoryLimit(math.MaxInt64)
}

// Cgroup returns the memory limit of the cgroup this process is in, the
// smallest of its own and its ancestors' (0 when none has one), and the
// file it was read from. It reads cgroup v2's memory.max, else cgroup v1's
// memory.limit_in_bytes, under root.
func Cgroup(root string) (limit int64, file string, err error) {
	f, err := os.Open(filepath.Join(root, "proc/self/cgroup")) //nolint:gosec // G304: the kernel's file, under the root a test may move
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, "", nil // not Linux, or no /proc: no cgroup to read
		}
		return 0, "", err
	}
	defer func() { _ = f.Close() }() // read only
	var v1, v2 string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	if err := sc.Err(); err != nil {
		return 0, "", err
	}
	if v2 != "" {
		if limit, file := smallest(root, "sys/fs/cgroup", v2, "memory.max"); limit > 0 {
			return limit, file, nil
		}
	}
	if v1 != "" {
		limit, file := smallest(root, "sys/fs/cgroup/memory", v1, "memory.limit_in_bytes")
		return limit, file, nil
	}
	return 0, "", nil
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smallest reads name in the cgroup at group under mount and in each of its
// ancestors, and returns the smallest limit found (0: none) and its file.
// A file that is missing or says "max" sets no limit.
func smallest(root, mount, group, name string) (int64, string) {
	var best int64
	var bestFile string
	for g := path.Clean("/" + group); ; g = path.Dir(g) {
		file := filepath.Join(root, mount, g, name)
		if b, err := os.ReadFile(file); err == nil { //nolint:gosec // G304: a cgroup file of this process's own cgroup
			v := strings.TrimSpace(string(b))
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < noLimit && (best == 0 || n < best) {
				best, bestFile = n, filepath.Join("/", mount, g, name)
			}
		}
		if g == "/" {
			return best, bestFile
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuGroup is a CPU-accounting control group of the harness's own: the CPU
// of every process that ever ran in it, those that died included, whoever
// reaped them. A stdio server killed with its process group leaves its
// grandchildren (node under npx) to init, whose CPU no parent's cutime
// counts; a group counts it. Needs root, and cgroup v1's cpuacct or v2.
type cpuGroup struct {
	dir   string
	usage func() (time.Duration, error)
}

// newCPUGroup makes a group named name: under cgroup v1's cpuacct
// hierarchy when it is mounted, else under the v2 root.
func newCPUGroup(name string) (*cpuGroup, error) {
	if v1 := "/sys/fs/cgroup/cpuacct"; isDir(v1) {
		g := &cpuGroup{dir: filepath.Join(v1, name)}
		g.usage = func() (time.Duration, error) {
			ns, err := readInt(filepath.Join(g.dir, "cpuacct.usage"))
			return time.Duration(ns), err
		}
		return g, g.make()
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		g := &cpuGroup{dir: filepath.Join("/sys/fs/cgroup", name)}
		g.usage = func() (time.Duration, error) {
			raw, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
			if err != nil {
				return 0, err
			}
			for line := range strings.Lines(string(raw)) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "usage_usec "); ok {
					us, err := strconv.ParseInt(v, 10, 64)
					return time.Duration(us) * time.Microsecond, err
				}
			}
			return 0, errors.New("cpu.stat has no usage_usec")
		}
		return g, g.make()
	}
	return nil, errors.New("no cgroup hierarchy to count CPU in (cgroup v1 cpuacct or v2)")
}

func (g *cpuGroup) make() error {
	if err := os.Mkdir(g.dir, 0o755); err != nil { //nolint:gosec // G301: a cgroup directory: the kernel sets its files' modes
		return fmt.Errorf("make the control group %s (run as root): %w", g.dir, err)
	}
	return nil
}

// wrap returns the command line that runs argv inside the group: a shell
// moves itself in, then execs argv, so nothing it starts runs outside.
func (g *cpuGroup) wrap(argv []string) []string {
	script := `echo $$ > "$0" && exec "$@"`
	return append([]string{"/bin/sh", "-c", script, filepath.Join(g.dir, "cgroup.procs")}, argv...)
}

// pids lists the processes in the group now.
func (g *cpuGroup) pids() []int {
	raw, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// memory sums the resident and the proportional set sizes of the group's
// processes but skip: shared pages (node's own code, libraries) count in
// each process's RSS and are split among them in its PSS.
func (g *cpuGroup) memory(skip int) (rss, pss int64, procs int) {
	for _, pid := range g.pids() {
		if pid == skip {
			continue
		}
		r, p, err := readRollup(pid)
		if err != nil {
			continue // gone since the listing
		}
		rss, pss, procs = rss+r, pss+p, procs+1
	}
	return rss, pss, procs
}

// remove deletes the group once it is empty, waiting a little for the
// processes in it to be reaped.
func (g *cpuGroup) remove() {
	for range 50 {
		if os.Remove(g.dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readRollup reads Rss and Pss, in bytes, from /proc/PID/smaps_rollup.
func readRollup(pid int) (rss, pss int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			rss = kb << 10
		case "Pss:":
			pss = kb << 10
		}
	}
	return rss, pss, nil
}

func readInt(path string) (int64, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: a file of the harness's own group
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

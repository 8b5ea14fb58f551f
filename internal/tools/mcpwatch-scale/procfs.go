package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What the harness reads of a process from /proc (Linux only). Each figure
// is read at an instant; the caller takes differences.

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// procStat is the part of /proc/PID/stat the harness uses.
type procStat struct {
	state rune
	ppid  int
	pgrp  int
	cpu   time.Duration // utime + stime
	// childCPU is cutime + cstime: the CPU of the children the process
	// waited for (a preflight's servers), read of a zombie at its exit.
	childCPU time.Duration
}

func readProcStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(raw)
}

// parseProcStat reads a stat line. The command name, field 2, is in
// parentheses and may hold spaces and parentheses: the fields after it start
// after its last ')'.
func parseProcStat(raw []byte) (procStat, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("/proc stat line without a command name: %.60q", raw)
	}
	f := strings.Fields(string(raw[end+1:]))
	// f[0] is field 3 (state); utime, stime, cutime and cstime are fields
	// 14 to 17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc stat line with %d fields after the name, want at least 15", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	utime, err3 := strconv.ParseInt(f[11], 10, 64)
	stime, err4 := strconv.ParseInt(f[12], 10, 64)
	cutime, err5 := strconv.ParseInt(f[13], 10, 64)
	cstime, err6 := strconv.ParseInt(f[14], 10, 64)
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return procStat{}, fmt.Errorf("/proc stat line: %w", err)
		}
	}
	return procStat{
		state:    []rune(f[0])[0],
		ppid:     ppid,
		pgrp:     pgrp,
		cpu:      time.Duration(utime+stime) * time.Second / clockTicks,
		childCPU: time.Duration(cutime+cstime) * time.Second / clockTicks,
	}, nil
}

// memStatus is the memory of a process from /proc/PID/status, in bytes.
type memStatus struct {
	rss     int64 // VmRSS
	peakRSS int64 // VmHWM: the high-water mark since the process started
}

func readMemStatus(pid int) (memStatus, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memStatus{}, err
	}
	return parseMemStatus(raw)
}

func parseMemStatus(raw []byte) (memStatus, error) {
	var m memStatus
	found := 0
	for line := range strings.Lines(string(raw)) {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.rss
		case "VmHWM":
			dst = &m.peakRSS
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("/proc status %s: %w", key, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return m, fmt.Errorf("/proc status without VmRSS and VmHWM")
	}
	return m, nil
}

// loadAverage is the one-minute load average, to show how busy the shared
// machine was during a measurement.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// processTable is every process of the system at one instant.
type processTable map[int]procStat

func readProcessTable() processTable {
	table := processTable{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil {
			continue // gone since the listing
		}
		table[pid] = st
	}
	return table
}

// descendants counts the processes below pid, and the zombies among them
// (ended, not yet reaped by their parent).
func (t processTable) descendants(pid int) (all, zombies int) {
	children := map[int][]int{}
	for p, st := range t {
		children[st.ppid] = append(children[st.ppid], p)
	}
	queue := append([]int(nil), children[pid]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		all++
		if t[p].state == 'Z' {
			zombies++
		}
		queue = append(queue, children[p]...)
	}
	return all, zombies
}

// markedProcesses counts the live processes whose environment holds
// marker (NAME=VALUE): every process a run started carries it, wherever it
// was reparented to.
func markedProcesses(marker string) int {
	needle := []byte(marker)
	count := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, path := range dirs {
		env, err := os.ReadFile(path) //nolint:gosec // G304: a /proc/<pid>/environ path from the glob above
		if err != nil {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(kv, needle) {
				count++
				break
			}
		}
	}
	return count
}

// openFDs counts the open file descriptors of pid (0 when unknown).
func openFDs(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(entries)
}

// Package shard splits a fleet of MCP servers between mcpwatch replicas:
// which shard a server belongs to, and the ordinal a StatefulSet gives a
// pod. It imports nothing of mcpwatch's.
//
// A server belongs to shard Of(name, total): the MD5 of its configured name,
// the last 8 bytes read as a big-endian integer, modulo total. That is the
// hash Prometheus's hashmod relabelling computes, so the assignment can be
// reproduced with a relabel rule, and it depends on nothing but the name and
// the number of shards: every replica computes the same split without
// talking to the others, and a reload or restart keeps it.
package shard

import (
	"crypto/md5" //nolint:gosec // G501: Prometheus's hashmod is MD5; the shard must match it, and nothing is secret
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Shard is one replica's part of the fleet: index in [0, Total). The zero
// value is the whole fleet (one shard of one).
type Shard struct {
	Index, Total int
}

// whole is the unsharded fleet.
var whole = Shard{Index: 0, Total: 1}

// Normalized returns s with a zero Total read as the whole fleet.
func (s Shard) Normalized() Shard {
	if s.Total <= 0 {
		return whole
	}
	return s
}

// Validate reports a shard that cannot exist.
func (s Shard) Validate() error {
	if s.Total < 1 {
		return fmt.Errorf("shard total %d: it must be at least 1", s.Total)
	}
	if s.Index < 0 || s.Index >= s.Total {
		return fmt.Errorf("shard index %d is not in [0, %d): indexes count from 0 to total-1", s.Index, s.Total)
	}
	return nil
}

// Owns reports whether the server of that name is in s.
func (s Shard) Owns(name string) bool {
	s = s.Normalized()
	return s.Total == 1 || Of(name, s.Total) == s.Index
}

// String is "1 of 3" (index of total).
func (s Shard) String() string {
	s = s.Normalized()
	return fmt.Sprintf("%d of %d", s.Index, s.Total)
}

// Of returns the shard, in [0, total), of the server of that name, as
// Prometheus's hashmod relabel action computes it. total must be positive.
func Of(name string, total int) int {
	sum := md5.Sum([]byte(name))                                 //nolint:gosec // G401: as Prometheus's hashmod, not for secrecy
	return int(binary.BigEndian.Uint64(sum[8:]) % uint64(total)) //nolint:gosec // G115: total is positive, and the remainder below it
}

// Ordinal returns the number a StatefulSet puts at the end of its pods'
// names ("mcpwatch-2" is 2): the digits after the last '-', without a sign
// or leading zeros. ok is false for a name that does not end so (a
// Deployment's pods end in a random suffix).
func Ordinal(podName string) (n int, ok bool) {
	i := strings.LastIndexByte(podName, '-')
	digits := podName[i+1:]
	if i <= 0 || digits == "" || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// FromPodName returns shard ordinal-of-podName of total, as
// kube-state-metrics shards by its StatefulSet pod: pod NAME-2 of a
// StatefulSet of 3 replicas is shard 2 of 3.
func FromPodName(podName string, total int) (Shard, error) {
	n, ok := Ordinal(podName)
	if !ok {
		return Shard{}, fmt.Errorf("pod name %q does not end in a StatefulSet ordinal (NAME-0, NAME-1, ...): run mcpwatch as a StatefulSet, or give --shard.index", podName)
	}
	s := Shard{Index: n, Total: total}
	if err := s.Validate(); err != nil {
		return Shard{}, fmt.Errorf("pod %s: %w: set --shard.total to the StatefulSet's replicas", podName, err)
	}
	return s, nil
}

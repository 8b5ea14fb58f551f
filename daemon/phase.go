package daemon

import (
	"hash/fnv"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

// phased is an @every schedule whose firings after the first sit on a grid
// aligned to the clock: phase + k*interval since the Unix epoch, the phase
// coming from the server's name. Servers that share an interval are thus
// spread evenly over it, the way Prometheus spreads scrape targets, instead
// of keeping for good the phases their first probes happened to get: a
// first round squeezed into a few seconds would otherwise repeat as a burst
// every interval. The phase depends on nothing but the name and the
// interval (and the replica, below), so a reload that keeps the interval
// keeps it.
//
// Two replicas watching the same servers (an HA pair) probe each server at
// different points of its interval, so that together they see a change in
// half the time one would. A replica named with a StatefulSet ordinal
// (NAME-0, NAME-1, ...) moves every phase by a fixed fraction of the
// interval: 0 for ordinal 0, 1/2 for 1, then 1/4, 3/4, 1/8, ... (the
// bit-reversed ordinal), so a pair is exactly half an interval apart and
// more replicas split the interval evenly. Any other replica name is mixed
// into the hash, which puts each server's two phases at independent places
// (on average a third of an interval between a change and the next probe of
// either, instead of a half). An empty replica name keeps the phase of the
// name alone.
type phased struct {
	interval time.Duration
	phase    time.Duration // in [0, interval)
}

func newPhased(name string, interval time.Duration, replica string) phased {
	return phased{interval: interval, phase: phaseOf(name, interval, replica)}
}

// phaseOf is the phase, in [0, interval), of the server of that name on
// that replica.
func phaseOf(name string, interval time.Duration, replica string) time.Duration {
	h := fnv.New64a()
	ordinal, hasOrdinal := shard.Ordinal(replica)
	if replica != "" && !hasOrdinal {
		_, _ = h.Write([]byte(replica)) // a hash.Hash never returns an error
		_, _ = h.Write([]byte{0})       // no name can run into the replica's
	}
	_, _ = h.Write([]byte(name))
	phase := time.Duration(h.Sum64() % uint64(interval)) //nolint:gosec // G115: interval is positive (an @every schedule) and the remainder is below it
	if hasOrdinal {
		phase = (phase + replicaOffset(ordinal, interval)) % interval
	}
	return phase
}

// replicaOffset is the bit-reversed ordinal as a fraction of interval:
// 0, 1/2, 1/4, 3/4, 1/8, 5/8, ... for ordinals 0, 1, 2, 3, 4, 5.
func replicaOffset(ordinal int, interval time.Duration) time.Duration {
	var offset time.Duration
	for part := interval / 2; ordinal > 0 && part > 0; part /= 2 {
		if ordinal&1 == 1 {
			offset += part
		}
		ordinal >>= 1
	}
	return offset
}

// Next is the first grid time more than half an interval after after.
// From a grid time that is the next one, exactly an interval later. From
// the first probe, whose time the start-up jitter chose, it keeps the gap
// to the second between half an interval and one and a half, so a server
// whose grid time falls just after its first probe is not probed twice in a
// row (the second firing would find the first still running, and be
// skipped).
func (p phased) Next(after time.Time) time.Time {
	return p.gridAfter(after.Add(p.interval / 2))
}

// gridAfter is the first grid time strictly after t.
func (p phased) gridAfter(t time.Time) time.Time {
	iv := int64(p.interval)
	ns := t.UnixNano() - int64(p.phase)
	k := ns / iv // truncated toward zero: one short of floor for a negative ns off the grid
	if ns >= 0 || ns%iv == 0 {
		k++
	}
	return time.Unix(0, k*iv+int64(p.phase))
}

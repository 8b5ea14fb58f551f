package memlimit

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The collector's pace for mcpwatch serve when GOGC is not set.
//
// Go's default (GOGC=100) collects whenever the heap has grown by as much
// as was live after the last collection. A daemon watching thousands of
// servers has a small live heap (about 7 kB a server) and allocates it
// over again at every probe, so at 10,000 servers every 15 s the default
// collected several times a second and the collector took about a fifth
// of the daemon's CPU. Pace lets the heap grow by at least Headroom
// between collections instead: GOGC = 100 x Headroom / live, never below
// Go's 100 (a large fleet's heap, hundreds of MB, is collected exactly as
// at the default) and never above MaxPercent. The heap's target is then
// live + max(live, Headroom), at most Headroom more than the default's.
// A soft memory limit (--memory.limit, GOMEMLIMIT) still bounds it: the
// runtime collects at whichever of the two comes first.
const (
	Headroom   = 160 << 20 // bytes the heap may grow by between collections, at least
	MaxPercent = 400       // the most GOGC set: a near-empty daemon still collects
	// paceEvery is how often the live heap is read: between two reads the
	// heap grows by at most the headroom of the pace last set.
	paceEvery = time.Second
)

// PercentFor is the GOGC for a live heap of live bytes (see Headroom).
func PercentFor(live int64) int {
	if live <= 0 {
		return MaxPercent
	}
	p := int64(100) * Headroom / live
	return int(min(max(p, 100), MaxPercent))
}

// liveHeap is the heap live after the last collection's marking, as the
// runtime computed it (0 before the first collection).
const liveHeap = "/gc/heap/live:bytes"

// Pace sets the collector's pace from the live heap every second until
// ctx ends, then puts back Go's default. Call it only when GOGC is not
// set: a GOGC the operator chose stands.
func Pace(ctx context.Context) {
	sample := []metrics.Sample{{Name: liveHeap}}
	read := func() int64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(min(sample[0].Value.Uint64(), 1<<62)) //nolint:gosec // G115: bounded above
	}
	t := time.NewTicker(paceEvery)
	defer t.Stop()
	pace(ctx, t.C, read, debug.SetGCPercent)
	debug.SetGCPercent(100)
}

// pace is Pace with its clock, its reading of the live heap and its
// setting of GOGC given: it sets the pace at once, then at every tick,
// and calls set only when the pace changes.
func pace(ctx context.Context, tick <-chan time.Time, live func() int64, set func(int) int) {
	last := -1
	for {
		if p := PercentFor(live()); p != last {
			set(p)
			last = p
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

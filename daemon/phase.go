package daemon

import (
	"hash/fnv"
	"time"
)

// phased is an @every schedule whose firings after the first sit on a grid
// aligned to the clock: phase + k*interval since the Unix epoch, the phase
// coming from the server's name. Servers that share an interval are thus
// spread evenly over it, the way Prometheus spreads scrape targets, instead
// of keeping for good the phases their first probes happened to get: a
// first round squeezed into a few seconds would otherwise repeat as a burst
// every interval. The phase depends on nothing but the name and the
// interval, so a reload that keeps the interval keeps it.
type phased struct {
	interval time.Duration
	phase    time.Duration // in [0, interval)
}

func newPhased(name string, interval time.Duration) phased {
	h := fnv.New64a()
	h.Write([]byte(name))
	return phased{interval: interval, phase: time.Duration(h.Sum64() % uint64(interval))}
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

package daemon

import (
	"math/rand/v2"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// schedule says when a server is probed next.
type schedule interface {
	Next(after time.Time) time.Time
}

// every is a fixed interval. cron's own @every rounds to whole seconds and
// up to at least one; tests and fast fleets need sub-second intervals. plan
// turns it into a phased schedule for each server.
type every time.Duration

func (e every) Next(after time.Time) time.Time { return after.Add(time.Duration(e)) }

// parseSchedule reads a schedule with config.ParseSchedule, which also
// validates the configuration, so the daemon runs exactly what `config
// check` accepts. interval is the fixed time between probes, or zero for a
// cron expression.
func parseSchedule(spec string) (s schedule, interval time.Duration, err error) {
	cs, err := config.ParseSchedule(spec)
	if err != nil {
		return nil, 0, err
	}
	if cs.Interval > 0 {
		return every(cs.Interval), cs.Interval, nil
	}
	return cs, 0, nil
}

// typicalGap is the time between two firings of s after now: the interval
// of an @every schedule, an estimate for a cron expression. It sizes the
// jitter of a first probe.
func typicalGap(s schedule, now time.Time) time.Duration {
	switch e := s.(type) {
	case every:
		return time.Duration(e)
	case phased:
		return e.interval
	}
	first := s.Next(now)
	if first.IsZero() {
		return 0
	}
	second := s.Next(first)
	if second.IsZero() {
		return 0
	}
	return second.Sub(first)
}

// firstDue is when the first probe of a server with schedule s, added at
// now, is due: at once give or take a jitter within spread (and within one
// gap of its schedule).
func firstDue(s schedule, now time.Time, spread time.Duration) time.Time {
	return now.Add(jitter(typicalGap(s, now), spread))
}

// jitter returns a random duration in [0, min(gap, limit)), so servers added
// together do not all start a process in the same instant.
func jitter(gap, limit time.Duration) time.Duration {
	window := min(gap, limit)
	if window <= 0 {
		return 0
	}
	return rand.N(window) //nolint:gosec // G404: start-time jitter, nothing secret
}

// nextAfter is the firing of s that follows the one due at due. A daemon
// that fell behind (a suspended machine, a long stall) skips the firings it
// missed rather than run them in a burst.
func nextAfter(s schedule, due, now time.Time) time.Time {
	next := s.Next(due)
	if next.IsZero() || !next.After(now) {
		if p, ok := s.(phased); ok {
			return p.gridAfter(now) // back on the server's grid at once
		}
		next = s.Next(now)
	}
	return next
}

// maxCountedMisses bounds the firings of a cron schedule missedFirings
// counts one by one.
const maxCountedMisses = 10_000

// missedFirings counts the firings of s after the one due at due that
// were due by now, and that nextAfter skipped for next because the daemon
// was late (none when it was on time). A fixed interval is counted by
// arithmetic; a cron expression firing by firing, at most
// maxCountedMisses.
func missedFirings(s schedule, due, next, now time.Time) int {
	first := s.Next(due)
	if first.IsZero() || next.IsZero() || !first.Before(next) || first.After(now) {
		return 0
	}
	var interval time.Duration
	switch e := s.(type) {
	case every:
		interval = time.Duration(e)
	case phased:
		interval = e.interval
	}
	if interval > 0 {
		return int(now.Sub(first)/interval) + 1
	}
	n := 0
	for t := first; !t.IsZero() && t.Before(next) && !t.After(now) && n < maxCountedMisses; t = s.Next(t) {
		n++
	}
	return n
}

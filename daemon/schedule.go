package daemon

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
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

// cronParser reads the five-field expressions, descriptors (@hourly,
// @daily, ...) and CRON_TZ= prefixes that crontab users know.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule reads "@every DURATION" or a cron expression. interval is
// the fixed time between probes, or zero for a cron expression.
func parseSchedule(spec string) (s schedule, interval time.Duration, err error) {
	spec = strings.TrimSpace(spec)
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return nil, 0, fmt.Errorf("schedule %q: %w", spec, err)
		}
		if d <= 0 {
			return nil, 0, fmt.Errorf("schedule %q: the interval must be positive", spec)
		}
		return every(d), d, nil
	}
	cs, err := cronParser.Parse(spec)
	if err != nil {
		return nil, 0, fmt.Errorf("schedule %q: %w (use \"@every 30s\" or a five-field cron expression)", spec, err)
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

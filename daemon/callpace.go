package daemon

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Call schedules. A server's contracts are called on the schedules
// config.Server.CallPlan gives them: most on its call_schedule, a metered
// tool or a generated input on a slower one, a contract on its own. The
// contracts that share a schedule are one callGroup, with its own slots in
// the timetable; a firing of a group makes one probe that calls its
// contracts (and, for the call_schedule's group, calls: auto's). A rate
// limit or a quota in an answer backs all the server's calls off (the
// limit is its credential's): no call is made until the wait the answer
// named, or else one that doubles with each limited round, has passed.

// callGroup is the contracts of a server called on one schedule.
type callGroup struct {
	spec     string // as config.CallPlan gives it
	sched    schedule
	interval time.Duration // of an @every schedule; 0 for a cron one
	tools    []string      // the contracts it calls, in their order
	// auto: the group of the server's call_schedule, which also makes its
	// calls: auto calls.
	auto bool
	// waiting is set while a firing of the group waits for the server's
	// probe to end: a firing that finds it set is skipped, so each tool
	// is called at most once per interval.
	waiting *atomic.Bool
}

// callGroups are the call schedules of srv (one with calls), the
// call_schedule's first, each phased on replica like a probe schedule.
func callGroups(srv config.Server, replica string) ([]callGroup, error) {
	var groups []callGroup
	add := func(spec, tool string, auto bool) error {
		i := slices.IndexFunc(groups, func(g callGroup) bool { return g.spec == spec })
		if i < 0 {
			sc, iv, err := parseSchedule(spec)
			if err != nil {
				return err
			}
			name := srv.Name + " calls"
			if spec != srv.CallSchedule {
				name += " " + spec // its own phase
			}
			if iv > 0 {
				sc = newPhased(name, iv, replica)
			}
			groups = append(groups, callGroup{spec: spec, sched: sc, interval: iv, waiting: new(atomic.Bool)})
			i = len(groups) - 1
		}
		if tool != "" {
			groups[i].tools = append(groups[i].tools, tool)
		}
		groups[i].auto = groups[i].auto || auto
		return nil
	}
	if srv.AutoCalls > 0 {
		if err := add(srv.CallSchedule, "", true); err != nil {
			return nil, err
		}
	}
	for _, c := range srv.Contracts {
		if err := add(srv.CallPlan(c).Schedule, c.Tool, false); err != nil {
			return nil, err
		}
	}
	return groups, nil
}

// sameGroups reports whether two servers' call groups call the same tools
// on the same schedules (their slots can stay).
func sameGroups(a, b []callGroup) bool {
	return slices.EqualFunc(a, b, func(x, y callGroup) bool {
		return x.spec == y.spec && x.auto == y.auto && slices.Equal(x.tools, y.tools)
	})
}

// callInterval is the interval of a server's call_schedule, when it has
// calls on it and it is an @every schedule (mcpwatch_call_interval_seconds).
func callInterval(groups []callGroup, srv config.Server) time.Duration {
	for _, g := range groups {
		if g.spec == srv.CallSchedule {
			return g.interval
		}
	}
	return 0
}

// forGroup is srv as a probe of group g sees it: only g's contracts, and
// calls: auto only in the call_schedule's group.
func forGroup(srv config.Server, g callGroup) config.Server {
	srv.Contracts = slices.DeleteFunc(slices.Clone(srv.Contracts), func(c contracts.Contract) bool { return !slices.Contains(g.tools, c.Tool) })
	if !g.auto {
		srv.AutoCalls = 0
	}
	return srv
}

// callRound is what a probe that made calls reports of them: their
// outcomes (nil when it made none), whether calls: auto's were among them,
// and the gap of the schedule they were made on.
type callRound struct {
	outcomes []contracts.Outcome
	auto     bool
	gap      time.Duration
}

// maxCallBackoff bounds how long a rate limit or a quota holds a server's
// calls: once a day at least, the canary looks whether the limit has gone
// (a refused call costs none of a quota, as Brave's and most APIs say).
const maxCallBackoff = 24 * time.Hour

// backOff records the outcomes of a round of calls that group made: a
// rate limit or a quota in any of them holds every call of the server
// until the wait it named (its Retry-After or reset), or else one that
// starts at two of the group's gaps and doubles with each limited round,
// at most maxCallBackoff; a round without one ends the hold. Called with
// s.mu held.
func (s *server) backOff(outcomes []contracts.Outcome, gap time.Duration, now time.Time) {
	var limited *contracts.Outcome
	var wait time.Duration
	for i, o := range outcomes {
		if o.Reason != probe.ReasonRateLimited || o.RateLimit == nil {
			continue
		}
		if limited == nil {
			limited = &outcomes[i]
		}
		wait = max(wait, o.RateLimit.RetryAfter, o.RateLimit.ResetAt.Sub(now))
	}
	if limited == nil {
		if len(outcomes) > 0 {
			s.status.CallsBackoff = nil
		}
		return
	}
	rounds := 1
	if b := s.status.CallsBackoff; b != nil {
		rounds = b.Rounds + 1
	}
	hinted := wait > 0
	if !hinted {
		wait = max(gap, time.Second) << min(rounds, 20)
	}
	wait = min(wait, maxCallBackoff)
	s.status.CallsBackoff = &status.Backoff{Until: now.Add(wait), Tool: limited.Tool, Quote: limited.RateLimit.Quote, Hinted: hinted, Rounds: rounds}
}

// heldUntil is when the server's calls may be made again, zero when they
// are not backed off.
func (s *server) heldUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.status.CallsBackoff; b != nil {
		return b.Until
	}
	return time.Time{}
}

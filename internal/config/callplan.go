package config

import (
	"fmt"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// How often each canary is called: the one rule the daemon's call
// schedules, check's calls, init's table, doctor and config check read.
// A contract is called on its server's call_schedule, unless it names a
// schedule of its own ("schedule" in the contract: the person's word,
// which wins), or its tool costs more than that (canary.DefaultPace: a
// tool the catalogue marks metered, a generated input on a tool nobody
// vetted), which slows call_schedule down; a metered tool without free
// calls is not called at all unless its contract names a schedule (Held).

// CallPlan is how often the daemon calls one contract of a server.
type CallPlan struct {
	Tool string
	// Schedule is what the daemon runs: the contract's own schedule, else
	// the server's call_schedule, slowed to the canary's default pace
	// where that is slower ("@every 7h27m"). "" for a contract that is not
	// called (see Server.Held).
	Schedule string
	// Own says Schedule is the contract's own.
	Own bool
	// Why says why Schedule is not the server's call_schedule; "" when
	// it is.
	Why string
}

// monthWindow is the month calls are counted over for people (30 days:
// "@every 5m" is 8,640 calls a month).
const monthWindow = 30 * 24 * time.Hour

// CallPlan is the plan of contract c of s (normalized: call_schedule
// set).
func (s Server) CallPlan(c contracts.Contract) CallPlan {
	if c.Schedule != "" {
		return CallPlan{Tool: c.Tool, Schedule: c.Schedule, Own: true, Why: "its contract's own schedule"}
	}
	pace := canary.DefaultPace(s.Command, s.Args, s.URL, c)
	switch {
	case pace.Never:
		return CallPlan{Tool: c.Tool, Why: pace.Why}
	case pace.Every > 0 && meanGap(s.CallSchedule) < pace.Every:
		return CallPlan{Tool: c.Tool, Schedule: "@every " + canary.Duration(pace.Every), Why: pace.Why}
	}
	return CallPlan{Tool: c.Tool, Schedule: s.CallSchedule}
}

// CallPlans are the plans of s's contracts, in their order; and Held's,
// which are not called.
func (s Server) CallPlans() []CallPlan {
	out := make([]CallPlan, 0, len(s.Contracts)+len(s.Held))
	for _, c := range append(append([]contracts.Contract{}, s.Contracts...), s.Held...) {
		out = append(out, s.CallPlan(c))
	}
	return out
}

// PerMonth is how many calls the plan makes in 30 days: 8,640 for
// "@every 5m"; 0 for a contract that is not called.
func (p CallPlan) PerMonth() int { return firingsPerMonth(p.Schedule) }

// firingsPerMonth counts the firings of a schedule in 30 days: by
// arithmetic for "@every", one by one (from a fixed start, bounded) for a
// cron expression; 0 for "" or one that does not parse.
func firingsPerMonth(spec string) int {
	if spec == "" {
		return 0
	}
	sc, err := ParseSchedule(spec)
	if err != nil {
		return 0
	}
	if sc.Interval > 0 {
		return int(monthWindow / sc.Interval)
	}
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for t := sc.Next(start); !t.IsZero() && t.Before(start.Add(monthWindow)) && n < maxCountedFirings; t = sc.Next(t) {
		n++
	}
	return n
}

// maxCountedFirings bounds the firings counted one by one: a cron
// expression fires at most once a minute, 43,200 times in 30 days.
const maxCountedFirings = 50_000

// meanGap is the time between two firings of a schedule, on average over
// a month; a schedule that does not fire, the whole month.
func meanGap(spec string) time.Duration {
	n := firingsPerMonth(spec)
	if n == 0 {
		return monthWindow
	}
	return monthWindow / time.Duration(n)
}

// contractScheduleErrors checks the schedule each contract of f names,
// as the daemon will parse it: errors name the contract's key (prefix,
// the tool, "schedule").
func contractScheduleErrors(prefix string, f contracts.File) []error {
	var errs []error
	for _, name := range f.Names() {
		if spec := f.Tools[name].Schedule; spec != "" {
			if _, err := ParseSchedule(spec); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", joinKey(joinKey(prefix, name), "schedule"), err))
			}
		}
	}
	return errs
}

// holdCalls moves the contracts of every server that are not called on
// any schedule (a metered tool without free calls whose contract names
// none) to Held: check and the daemon call them no more than a disabled
// contract, and config check, doctor and init say why.
func (c *Config) holdCalls() {
	for _, list := range [][]Server{c.Servers, c.Ignored} {
		for i := range list {
			s := &list[i]
			var kept []contracts.Contract
			for _, ct := range s.Contracts {
				if s.CallPlan(ct).Schedule == "" {
					s.Held = append(s.Held, ct)
				} else {
					kept = append(kept, ct)
				}
			}
			s.Contracts = kept
		}
	}
}

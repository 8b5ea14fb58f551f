package canary

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// A monitor spends none of what it watches. A canary is called on its
// server's call_schedule (every 5 minutes by default: 8,640 calls a
// month), unless its tool costs more than that: DefaultPace is the least
// time between two of its calls when its contract names no schedule of its
// own. Two kinds of call cost more:
//
//   - a tool whose service counts its calls against a plan (the
//     catalogue's Metered): by default mcpwatch spends at most
//     FreeTierShare of the plan's free calls a month, and none of a plan
//     that has no free calls (every call billed): such a tool is called
//     only when its contract names a schedule, which is the person's
//     opt-in;
//   - a call with an input generated from the tool's schema
//     ("credentialAccepted") on a tool the catalogue does not vouch for:
//     nobody knows what it costs, so at most once every GeneratedEvery.
//
// config.Server.CallPlan applies the pace to the server's call_schedule;
// the daemon, check, init's table, doctor and config check all read it
// there.

// FreeTierShare is the share of a metered tool's free calls a month that
// mcpwatch spends by default.
const FreeTierShare = 0.05

// GeneratedEvery is the least time between two calls with a generated
// input on a tool nobody vetted, by default.
const GeneratedEvery = time.Hour

// quotaMonth is the month a free tier is counted over: the longest, so
// that the share holds in every calendar month.
const quotaMonth = 31 * 24 * time.Hour

// Meter is how a service counts the calls of a server's tools, as its
// public pricing page says.
type Meter struct {
	// Tools are the tools whose calls are counted; empty: every tool of
	// the server.
	Tools []string `json:"tools,omitempty"`
	// FreePerMonth is how many calls a month the plan gives free; 0: none,
	// every call is billed.
	FreePerMonth int `json:"freePerMonth"`
	// Plan names the plan ("Brave Search API, Free"), Source the public
	// page that gives its figures.
	Plan   string `json:"plan"`
	Source string `json:"source"`
}

// pace is the pace of a tool m counts.
func (m Meter) pace(tool string) Pace {
	if m.FreePerMonth <= 0 {
		return Pace{Never: true, Why: fmt.Sprintf("%s bills every call of %s (%s): not called unless its contract names a schedule", m.Plan, tool, m.Source)}
	}
	allowed := FreeTierShare * float64(m.FreePerMonth)
	every := (quotaMonth / time.Duration(allowed)).Truncate(time.Minute)
	if every < quotaMonth/time.Duration(allowed) {
		every += time.Minute // up, so that the share holds
	}
	return Pace{Every: every, Why: fmt.Sprintf("%s gives %s free calls a month (%s): by default mcpwatch spends at most %g%% of them, %s, one every %s",
		m.Plan, thousands(m.FreePerMonth), m.Source, FreeTierShare*100, thousands(int(allowed)), Duration(every))}
}

// counts reports whether m counts the calls of tool.
func (m Meter) counts(tool string) bool { return len(m.Tools) == 0 || slices.Contains(m.Tools, tool) }

// Pace is how often, at most, a canary's tool is called by default.
type Pace struct {
	// Every is the least time between two calls; 0: no bound but the
	// server's call_schedule.
	Every time.Duration
	// Never: the tool is billed from its first call, and is not called
	// unless its contract names a schedule.
	Never bool
	// Why says so, for people; "" without a bound.
	Why string
}

// DefaultPace is the pace of a contract of the server that runs so (its
// command and arguments, or its URL) when the contract names no schedule
// of its own: the slower of a metered tool's and a generated input's.
func DefaultPace(command string, args []string, rawURL string, c contracts.Contract) Pace {
	return defaultPace(catalogue(), command, args, rawURL, c)
}

func defaultPace(entries []CatalogueEntry, command string, args []string, rawURL string, c contracts.Contract) Pace {
	var p Pace
	if e, ok := metered(entries, command, args, rawURL, c.Tool); ok {
		if p = e.Metered.pace(c.Tool); p.Never {
			return p
		}
	}
	if c.Expect.Status == contracts.StatusCredentialAccepted && !vouchedByName(entries, command, args, rawURL, c.Tool) && GeneratedEvery > p.Every {
		p = Pace{Every: GeneratedEvery, Why: fmt.Sprintf("an input generated from the schema of a tool nobody vetted, whose calls may cost: at most one every %s", Duration(GeneratedEvery))}
	}
	return p
}

// Metered reports whether the catalogue says the service behind the
// server that runs so counts the calls of tool: calls: auto never chooses
// such a tool, which only a contract calls, at its pace.
func Metered(command string, args []string, rawURL string, tool string) bool {
	_, ok := metered(catalogue(), command, args, rawURL, tool)
	return ok
}

func metered(entries []CatalogueEntry, command string, args []string, rawURL string, tool string) (CatalogueEntry, bool) {
	for _, e := range entries {
		if _, serves := e.serves(command, args, rawURL); e.Metered != nil && e.Metered.counts(tool) && serves {
			return e, true
		}
	}
	return CatalogueEntry{}, false
}

// vouchedByName reports whether the catalogue vets tool, by name, as the
// canary of the server that runs so.
func vouchedByName(entries []CatalogueEntry, command string, args []string, rawURL string, tool string) bool {
	for _, e := range entries {
		if e.Tool == tool && e.matches(command, args, rawURL) {
			return true
		}
	}
	return false
}

// Duration is d as a person writes it: "7h27m", "1h", "5m", "30s".
func Duration(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"m0s", "h0m"} {
		if len(s) > len(zero) && s[len(s)-len(zero):] == zero {
			s = s[:len(s)-len(zero)+1]
		}
	}
	return s
}

// thousands writes n with a comma between each three digits: 2,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

package main

import (
	"fmt"
	"strings"
	"time"
)

// Canary calls at scale (-contracts N): every simulated HTTP server gets
// contracts for its first N tools, called on a call_schedule of
// -call-interval, in the same daemon that probes the fleet. The simulated
// tools carry no annotations, so each contract allows side effects and the
// server opts its tools in to destructive calls: the same permit check and
// call path a read-only tool takes, without changing the fleet's listings
// (and so the baseline runs).

// callSpec is what -contracts, -auto-calls and -call-interval ask for.
// With -auto-calls N, each server's first tool is annotated read-only and
// needs no argument, and the server says calls: auto (auto_calls: N):
// mcpwatch chooses the tool from each listing, as for a real fleet.
type callSpec struct {
	contracts int
	auto      int
	interval  time.Duration
}

// perServer is how many calls each server makes per firing.
func (c callSpec) perServer() int { return c.contracts + min(c.auto, 1) }

// configFor is the part of a server's inline configuration that adds its
// contracts: ", calls: {...}, allow_destructive_calls: [...]".
func (c callSpec) configFor(tools []string) string {
	if c.auto > 0 && c.contracts <= 0 {
		return fmt.Sprintf(", calls: auto, auto_calls: %d, call_schedule: \"@every %s\"", c.auto, c.interval)
	}
	if c.contracts <= 0 {
		return ""
	}
	tools = tools[:min(c.contracts, len(tools))]
	calls := make([]string, len(tools))
	for i, t := range tools {
		calls[i] = fmt.Sprintf("%s: {input: {from: \"2026-08-01\"}, allowSideEffects: true, expect: {status: pass}}", t)
	}
	return fmt.Sprintf(", calls: {%s}, allow_destructive_calls: [%s], call_schedule: \"@every %s\"",
		strings.Join(calls, ", "), strings.Join(tools, ", "), c.interval)
}

// validate refuses contracts where the harness cannot add them.
func (c callSpec) validate(mode string) error {
	switch {
	case c.contracts < 0:
		return fmt.Errorf("-contracts %d: want 0 or more", c.contracts)
	case c.auto < 0:
		return fmt.Errorf("-auto-calls %d: want 0 or more", c.auto)
	case c.auto > 0 && c.contracts > 0:
		return fmt.Errorf("-auto-calls and -contracts: give one")
	case c.perServer() > 0 && mode != "http":
		return fmt.Errorf("-contracts and -auto-calls apply to -mode http")
	case c.perServer() > 0 && c.interval <= 0:
		return fmt.Errorf("-call-interval must be positive")
	}
	return nil
}

// apiCall is what the harness reads of one contracted tool.
type apiCall struct {
	Tool   string `json:"tool"`
	Calls  uint64 `json:"calls"`
	Passed *bool  `json:"passed"`
}

// callFigures fills the call figures of a window from two reads of
// /api/v1/servers, and counts the call probes among the scheduled probes:
// a call firing is a probe that lists and calls.
func (r *result) callFigures(o scaleOptions, before, after map[string]apiServer) {
	if o.calls.perServer() <= 0 {
		return
	}
	r.Contracts, r.AutoCalls = o.calls.contracts, o.calls.auto
	r.CallIntervalS = o.calls.interval.Seconds()
	r.ScheduledPerS += float64(o.n) / o.calls.interval.Seconds()
	var failed uint64
	for name, a := range after {
		b := before[name]
		for i, c := range a.Calls {
			var was uint64
			if i < len(b.Calls) && b.Calls[i].Tool == c.Tool {
				was = b.Calls[i].Calls
			}
			r.CallsMade += c.Calls - was
			if c.Passed != nil && !*c.Passed {
				failed++
			}
		}
	}
	r.CallsScheduled = float64(o.n*o.calls.perServer()) * r.WindowS / o.calls.interval.Seconds()
	if total := o.n * o.calls.perServer(); total > 0 {
		r.CallsFailingShare = float64(failed) / float64(total)
	}
}

func (r *result) printCalls(p func(format string, args ...any)) {
	if r.AutoCalls > 0 {
		p("  calls:       calls: auto (one read-only tool per server) every %gs: %d calls in the window, %.0f scheduled; %.1f%% of tools failing at the end (the fleet's failing servers)",
			r.CallIntervalS, r.CallsMade, r.CallsScheduled, 100*r.CallsFailingShare)
		return
	}
	if r.Contracts == 0 {
		return
	}
	p("  calls:       %d contracts per server every %gs: %d calls in the window, %.0f scheduled; %.1f%% of tools failing at the end (the fleet's failing servers)",
		r.Contracts, r.CallIntervalS, r.CallsMade, r.CallsScheduled, 100*r.CallsFailingShare)
}

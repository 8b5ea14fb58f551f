package daemon

import (
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Record is one finished probe as the history keeps it: what a person needs
// to see why it passed or failed, without the tool list itself, so a
// server listing thousands of tools costs the history little.
type Record struct {
	Seq             uint64        `json:"seq"`
	Trigger         string        `json:"trigger"` // "schedule", "request" (/probe), "calls" or "change" (the server announced one)
	State           verdict.State `json:"state"`
	Started         time.Time     `json:"started"`
	Duration        time.Duration `json:"-"`
	DurationSeconds float64       `json:"duration_seconds"`
	Reason          probe.Reason  `json:"reason,omitempty"`
	Error           string        `json:"error,omitempty"`
	Era             probe.Era     `json:"era,omitempty"`
	ProtocolVersion string        `json:"protocol_version,omitempty"`
	Tools           int           `json:"tools"`
	Expected        int           `json:"expected"`
	Missing         []string      `json:"missing,omitempty"`
	Extra           []string      `json:"extra,omitempty"`
	Forbidden       []string      `json:"forbidden,omitempty"`
	StderrTail      string        `json:"stderr_tail,omitempty"`
	FailedCalls     []string      `json:"failed_calls,omitempty"`
}

// newRecord is the record of a probe, with the judgement made of the
// server when it was recorded (its calls included).
func newRecord(seq uint64, trigger string, res *probe.Result, diff lockstore.Diff, j verdict.Judgement) Record {
	r := Record{
		Seq:             seq,
		Trigger:         trigger,
		State:           j.State,
		FailedCalls:     j.Calls,
		Started:         res.Started,
		Duration:        res.Timings.Total,
		DurationSeconds: res.Timings.Total.Seconds(),
		Reason:          res.Reason,
		Error:           res.Error,
		Era:             res.Era,
		ProtocolVersion: res.ProtocolVersion,
		Tools:           len(res.Tools),
		Expected:        len(diff.Expected),
		StderrTail:      res.StderrTail,
	}
	if res.OK {
		r.Missing, r.Extra, r.Forbidden = recordNames(diff.Missing), recordNames(diff.Extra), recordNames(diff.Forbidden)
	}
	return r
}

// recordNames is a record's copy of a list of names a server chose, each cut
// by sanitize.Name: the history is for people, and a server that changes
// a 3 MB name at every probe would otherwise have each copy kept. The list
// itself when no name is too long, which it shares with the status.
func recordNames(names []string) []string {
	if !slices.ContainsFunc(names, func(n string) bool { return len(n) > sanitize.MaxNameBytes }) {
		return names
	}
	cut := make([]string, len(names))
	for i, n := range names {
		cut[i] = sanitize.Name(n)
	}
	return cut
}

// history keeps the last probes of one server in two rings: every probe,
// and the probes that did not pass. A run of passing probes cannot push the
// last failure out, which is the probe a person opens the page to see.
type history struct {
	all, failed ring
}

func newHistory(limit int) history {
	return history{all: ring{limit: limit}, failed: ring{limit: limit}}
}

func (h *history) add(r Record) {
	// A server's names rarely change between probes: the record shares the
	// previous one's lists when equal, rather than keep its own copy of
	// every name (an unlocked server's Extra lists all of its tools).
	if n := len(h.all.items); n > 0 {
		prev := &h.all.items[n-1]
		r.Missing = sameOr(prev.Missing, r.Missing)
		r.Extra = sameOr(prev.Extra, r.Extra)
		r.Forbidden = sameOr(prev.Forbidden, r.Forbidden)
		r.FailedCalls = sameOr(prev.FailedCalls, r.FailedCalls)
	}
	h.all.add(r)
	if r.State != verdict.StateOK {
		h.failed.add(r)
	}
}

// records returns the kept probes, newest first, each once.
func (h *history) records() []Record {
	out := make([]Record, 0, len(h.all.items)+len(h.failed.items))
	out = append(out, h.all.items...)
	for _, r := range h.failed.items {
		if !slices.ContainsFunc(h.all.items, func(a Record) bool { return a.Seq == r.Seq }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int {
		switch {
		case a.Seq > b.Seq:
			return -1
		case a.Seq < b.Seq:
			return 1
		}
		return 0
	})
	return out
}

// ring keeps the last limit records, oldest first.
type ring struct {
	limit int
	items []Record
}

func (r *ring) add(rec Record) {
	if r.limit <= 0 {
		return
	}
	if len(r.items) == r.limit {
		copy(r.items, r.items[1:])
		r.items = r.items[:len(r.items)-1]
	}
	if len(r.items) == cap(r.items) {
		// Grown to the limit exactly, not past it as append would (32
		// records held for 20 kept: at 10,000 servers, 90 MB for 58).
		grown := make([]Record, len(r.items), min(max(2*cap(r.items), 4), r.limit))
		copy(grown, r.items)
		r.items = grown
	}
	r.items = append(r.items, rec)
}

// sameOr returns prev when it holds the same names as cur, else cur. The
// lists are never written once recorded, so sharing them is safe.
func sameOr(prev, cur []string) []string {
	if len(cur) > 0 && slices.Equal(prev, cur) {
		return prev
	}
	return cur
}

package daemon

import (
	"math"
	"slices"
	"time"
	"unique"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
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
	var prev *keptRecord
	if n := len(h.all.items); n > 0 {
		prev = &h.all.items[n-1]
	}
	k := keep(r, prev)
	h.all.add(k)
	if r.State != verdict.StateOK {
		h.failed.add(k)
	}
}

// records returns the kept probes, newest first, each once.
func (h *history) records() []Record {
	out := make([]Record, 0, len(h.all.items)+len(h.failed.items))
	for _, k := range h.all.items {
		out = append(out, k.record())
	}
	for _, k := range h.failed.items {
		if !slices.ContainsFunc(h.all.items, func(a keptRecord) bool { return a.seq == k.seq }) {
			out = append(out, k.record())
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

// keptRecord is a Record as the history holds it: 48 bytes instead of
// 288, since a daemon keeps twenty of them for each of thousands of
// servers (at 10,000 servers, 10 MB instead of 58). Its words (state,
// trigger, reason, era, protocol version, error, stderr) are one interned
// value, which a server's probes share while they say the same, and its
// names are shared with the record before while equal.
type keptRecord struct {
	seq             uint64
	started         int64 // Unix nanoseconds; 0 for the zero time
	duration        time.Duration
	tools, expected int32
	words           unique.Handle[recordWords]
	names           *keptNames // nil: none
}

type recordWords struct {
	state           verdict.State
	trigger         string
	reason          probe.Reason
	era             probe.Era
	protocolVersion string
	err             string
	stderrTail      string
}

type keptNames struct {
	missing, extra, forbidden, failedCalls []string
}

func (n *keptNames) equal(o *keptNames) bool {
	if n == nil || o == nil {
		return n == o
	}
	return slices.Equal(n.missing, o.missing) && slices.Equal(n.extra, o.extra) &&
		slices.Equal(n.forbidden, o.forbidden) && slices.Equal(n.failedCalls, o.failedCalls)
}

// keep is r as the history holds it. A server's words and names rarely
// change between probes: they are the record before's (prev, nil for the
// first) when equal, rather than interned or kept again (an unlocked
// server's Extra lists all of its tools).
func keep(r Record, prev *keptRecord) keptRecord {
	k := keptRecord{
		seq:      r.Seq,
		duration: r.Duration,
		tools:    int32(min(r.Tools, math.MaxInt32)),    //nolint:gosec // G115: clamped
		expected: int32(min(r.Expected, math.MaxInt32)), //nolint:gosec // G115: clamped
	}
	words := recordWords{state: r.State, trigger: r.Trigger, reason: r.Reason, era: r.Era,
		protocolVersion: r.ProtocolVersion, err: r.Error, stderrTail: r.StderrTail}
	if prev != nil && prev.words.Value() == words {
		k.words = prev.words
	} else {
		k.words = unique.Make(words)
	}
	if !r.Started.IsZero() {
		k.started = r.Started.UnixNano()
	}
	if len(r.Missing)+len(r.Extra)+len(r.Forbidden)+len(r.FailedCalls) > 0 {
		k.names = &keptNames{missing: r.Missing, extra: r.Extra, forbidden: r.Forbidden, failedCalls: r.FailedCalls}
	}
	if prev != nil && prev.names.equal(k.names) {
		k.names = prev.names
	}
	return k
}

// record is the Record k was kept from.
func (k keptRecord) record() Record {
	w := k.words.Value()
	r := Record{
		Seq: k.seq, Trigger: w.trigger, State: w.state,
		Duration: k.duration, DurationSeconds: k.duration.Seconds(),
		Reason: w.reason, Error: w.err, Era: w.era, ProtocolVersion: w.protocolVersion,
		Tools: int(k.tools), Expected: int(k.expected), StderrTail: w.stderrTail,
	}
	if k.started != 0 {
		r.Started = time.Unix(0, k.started)
	}
	if n := k.names; n != nil {
		r.Missing, r.Extra, r.Forbidden, r.FailedCalls = n.missing, n.extra, n.forbidden, n.failedCalls
	}
	return r
}

// ring keeps the last limit records, oldest first.
type ring struct {
	limit int
	items []keptRecord
}

func (r *ring) add(rec keptRecord) {
	if r.limit <= 0 {
		return
	}
	if len(r.items) == r.limit {
		copy(r.items, r.items[1:])
		r.items = r.items[:len(r.items)-1]
	}
	if len(r.items) == cap(r.items) {
		// Grown to the limit exactly, not past it as append would (32
		// records held for 20 kept).
		grown := make([]keptRecord, len(r.items), min(max(2*cap(r.items), 4), r.limit))
		copy(grown, r.items)
		r.items = grown
	}
	r.items = append(r.items, rec)
}

// trendPoint is one kept probe as the pages draw it: the level of its
// state (its colour), whether it listed the server's tools (no failure
// reason) and how many, and how long it took. Read straight from the kept
// records, without making a Record of each.
type trendPoint struct {
	level    verdict.Level
	listed   bool
	duration time.Duration
	tools    int32
}

// trend appends the last probes, oldest first, to dst: the ring of every
// probe, so the strip and the sparklines show them in the order they ran.
func (h *history) trend(dst []trendPoint) []trendPoint {
	for _, k := range h.all.items {
		w := k.words.Value()
		dst = append(dst, trendPoint{level: w.state.Level(), listed: w.reason == "", duration: k.duration, tools: k.tools})
	}
	return dst
}

// Package status is the daemon's model of what it knows of each server:
// the last probe, how it compared with the lock, the canary calls, and the
// judgement made of them when they were recorded. The daemon writes it;
// the metrics renderer, the status page and the JSON API read it and
// derive no state of their own.
package status

import (
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Server is the latest truth about one configured server: its last probe,
// how that compared with the lock, and the judgement of both. The daemon
// keeps one per server; the metrics, the status page and the JSON API all
// read it.
type Server struct {
	Name      string
	Transport probe.Transport // as configured
	Schedule  string
	// Interval is the time between scheduled probes; zero when the schedule
	// has none fixed (a cron expression), which omits the interval metric.
	Interval time.Duration
	// Last is the most recent probe; nil until the first one ends.
	Last *probe.Result
	// LastOK is the most recent successful probe (Last itself when that
	// succeeded); nil if none has. The info series reads it, so the server's
	// name and version stay known while it fails. Once a failure replaces
	// it as Last, the daemon keeps only its info fields, not its tools.
	LastOK *probe.Result
	// Diff compares Last with the lock as last read (the daemon compares
	// again when the lock file changes). Locked and Expected are filled from
	// the lock even before the first probe, so the expected tool count is
	// exported as soon as the server is configured.
	Diff lockstore.Diff
	// LastSuccess is when a probe last succeeded (its end); zero if never.
	LastSuccess time.Time
	// Failures counts failed probes by reason since the server was added.
	Failures map[probe.Reason]uint64
	// Probes counts every finished probe since the server was added.
	Probes uint64
	// Calls are the server's contracted canary calls, one per contract
	// sorted by tool; empty for a server without contracts. A tool leaves
	// with its contract.
	Calls []Call
	// CallInterval is the time between scheduled calls on the server's
	// call_schedule; zero for a cron call_schedule, or none on it.
	CallInterval time.Duration
	// CallsBackoff says the server's calls are held for a rate limit or
	// a quota an answer showed; nil when they are not. It is replaced,
	// never written, once published.
	CallsBackoff *Backoff
	// Judgement is the verdict on Last, Diff and the latest outcome of
	// each call, made when any of them was last recorded: the state every
	// output shows.
	Judgement verdict.Judgement
	// Listener is the stream the daemon holds to hear the server announce
	// changes of its tools (watch_changes); nil when it holds none. It is
	// replaced, never written, once published.
	Listener *Listener
	// Stdio is how the daemon runs a stdio server (its process); nil for a
	// remote one. It is replaced, never written, once published.
	Stdio *Stdio
	// Operations are the histograms of the requests mcpwatch made to the
	// server (probes and canary calls), one per kind of request and its
	// outcome, since the server was added: what
	// mcp_client_operation_duration_seconds exports. The slice and its
	// series are replaced, never written, once published.
	Operations []OperationSeries
}

// OperationSeries is the duration histogram of one kind of request: its
// method, the tool of a tools/call, how it failed ("" when answered), the
// session's protocol version and the transport. Counts[i] are the requests
// that took at most the metrics package's bound i (not cumulative), the
// last one those above every bound.
type OperationSeries struct {
	Method, Tool, ErrorType, ProtocolVersion, Transport string

	Counts []uint64
	Count  uint64
	Sum    float64 // seconds
}

// Stdio is how the daemon runs a stdio server.
type Stdio struct {
	// Configured is its stdio_mode (config.StdioLive or StdioFresh).
	Configured string
	// Live: the server runs between probes now, and the next probe is
	// tools/list on it. False before the first probe, in fresh mode, and
	// while a live one is not running (its last probe failed, or
	// live_sessions were all taken).
	Live bool
	// Started is when its process last started; zero before any did.
	Started time.Time
	// Start is why a live server was last started (a probe.StartReason);
	// empty for a fresh start.
	Start probe.StartReason
	// Starts counts its starts since the server was added.
	Starts uint64
}

// Listener is what the daemon knows of its listening stream to a server.
type Listener struct {
	Up bool // the stream is open now
	// Notifications counts the notifications/tools/list_changed heard
	// since the listener started.
	Notifications uint64
	// Floods counts the streams the daemon stopped reading because the
	// server announced changes far faster than it re-probes.
	Floods uint64
}

// Call is what the daemon knows of one contracted tool's calls.
type Call struct {
	Tool string
	// Schedule is how often it is called (config.CallPlan), and Paced why
	// that is not the server's call_schedule ("" when it is).
	Schedule, Paced string
	// Last is the outcome of the latest call; nil until one ends.
	Last *contracts.Outcome
	// LastFailure is the latest failed outcome (Last itself when that
	// failed); nil if none has failed. The server page shows what came
	// back.
	LastFailure *contracts.Outcome
	// Calls counts finished calls, Failures failed ones by reason, since
	// the contract was added.
	Calls    uint64
	Failures map[probe.Reason]uint64
}

// Backoff is a hold on a server's calls: an answer showed a rate limit or
// a quota, and no call is made before Until.
type Backoff struct {
	Until time.Time
	// Tool is the call whose answer showed it, Quote its words
	// (scrubbed, not yet escaped).
	Tool, Quote string
	// Hinted says the answer named the wait (Retry-After, a reset);
	// otherwise it doubles with each limited round (Rounds in a row).
	Hinted bool
	Rounds int
}

// LatestCalls are the last outcomes of the calls made so far, in the order
// of their tools.
func (st *Server) LatestCalls() []contracts.Outcome {
	var out []contracts.Outcome
	for _, c := range st.Calls {
		if c.Last != nil {
			out = append(out, *c.Last)
		}
	}
	return out
}

// Source gives the current statuses, sorted by name. The metrics handler
// calls it at every scrape: it must be cheap and safe for concurrent use.
type Source interface {
	Statuses() []Server
}

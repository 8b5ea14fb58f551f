package daemon

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/runner"
)

// server is one configured server and everything the daemon knows of it.
type server struct {
	name string
	// busy holds a token while a probe of this server runs: a scheduled
	// firing that finds it taken is skipped, an on-demand probe waits.
	busy chan struct{}
	// ctx is canceled when the server leaves the configuration, which ends
	// its running probe (and kills its process group) at once.
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by Daemon.mu.
	cfg      config.Server
	sched    schedule
	interval time.Duration
	gen      uint64 // schedule generation, unique in the daemon; see slot

	mu      sync.Mutex // guards what follows
	status  metrics.ServerStatus
	era     probe.Era // the era the last successful probe found; "" to detect
	history history
	verdict *verdict // of the last probe; nil before the first
	seq     uint64   // probes recorded
	skipped uint64   // scheduled firings skipped because a probe was still running
}

func newServer(parent context.Context, cfg config.Server, sched schedule, interval time.Duration, historyLimit int) *server {
	ctx, cancel := context.WithCancel(parent)
	return &server{
		name:     cfg.Name,
		busy:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		cfg:      cfg,
		sched:    sched,
		interval: interval,
		status: metrics.ServerStatus{
			Name:      cfg.Name,
			Transport: runner.Transport(cfg),
			Schedule:  cfg.Schedule,
			Interval:  interval,
		},
		history: newHistory(historyLimit),
	}
}

// snapshot returns a copy of the status that shares nothing mutable with
// the server: Failures is replaced, never written, once published.
func (s *server) snapshot() metrics.ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// setConfig takes a changed configuration. The remembered era is dropped
// when anything that reaches the server changed: it may be another server.
func (s *server) setConfig(cfg config.Server, interval time.Duration, reach bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reach {
		s.era = ""
	}
	s.status.Transport = runner.Transport(cfg)
	s.status.Schedule = cfg.Schedule
	s.status.Interval = interval
}

// setExpected fills the lock side of a server not probed yet, so the
// expected tool count is known from the start.
func (s *server) setExpected(names []string, locked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.Last == nil {
		s.status.Diff = lockstore.Diff{Locked: locked, Expected: names}
	}
}

func expectedNames(entry lockstore.Entry, locked bool) []string {
	if !locked {
		return nil
	}
	return entry.Names()
}

// rememberedEra is the era hint for the next probe.
func (s *server) rememberedEra() probe.Era {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era
}

// eraChangeReasons are failures that suggest the server was replaced or
// upgraded: the era it spoke may no longer be the one it speaks.
var eraChangeReasons = map[probe.Reason]bool{
	probe.ReasonProtocol:   true,
	probe.ReasonRPCError:   true,
	probe.ReasonHTTPStatus: true,
	probe.ReasonClosed:     true,
	probe.ReasonExited:     true,
}

// recordResult stores a finished probe and returns the verdict before it
// (nil for the first) and after, for the state-change log.
func (s *server) recordResult(trigger string, res *probe.Result, diff lockstore.Diff) (was *verdict, now verdict) {
	// The transcript of a debug probe goes to its requester, not into the
	// state every scrape reads.
	if res.Transcript != nil {
		stripped := *res
		stripped.Transcript = nil
		res = &stripped
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	st := &s.status
	st.Last = res
	st.Diff = diff
	st.Probes++
	if res.OK {
		st.LastOK = res
		st.LastSuccess = res.Started.Add(res.Timings.Total)
		if res.Era != "" {
			s.era = res.Era
		}
	} else {
		failures := make(map[probe.Reason]uint64, len(st.Failures)+1)
		maps.Copy(failures, st.Failures)
		failures[res.Reason]++
		st.Failures = failures
		if eraChangeReasons[res.Reason] {
			s.era = ""
		}
	}

	s.seq++
	s.history.add(newRecord(s.seq, trigger, res, diff))

	now = verdictOf(res, diff)
	was = s.verdict
	s.verdict = &now
	return was, now
}

// details is what the server page and the JSON API show of one server.
type details struct {
	Status  metrics.ServerStatus
	History []Record
	Skipped uint64
	Era     probe.Era // remembered for the next probe
}

func (s *server) details() details {
	s.mu.Lock()
	defer s.mu.Unlock()
	return details{Status: s.status, History: s.history.records(), Skipped: s.skipped, Era: s.era}
}

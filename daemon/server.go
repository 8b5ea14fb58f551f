package daemon

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
	"unique"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/eracache"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// server is one configured server and everything the daemon knows of it.
type server struct {
	name string
	// ctx is canceled when the server leaves the configuration, which ends
	// its running probe (and kills its process group) at once.
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by Daemon.mu.
	cfg      config.Server
	sched    schedule
	interval time.Duration
	gen      uint64 // schedule generation, unique in the daemon; see slot
	// The call schedules, for a server with calls (none otherwise);
	// callGen is the generation of their slots.
	callGroups []callGroup
	callGen    uint64

	mu sync.Mutex // guards what follows
	// flight is the probe of this server running now, nil when none: never
	// two at once. A scheduled firing that finds one is skipped; a /probe
	// request waits for it (see flight.go).
	flight  *flight
	status  status.Server
	era     probe.Era // the era the last successful probe found; "" to detect
	history history
	seq     uint64 // probes recorded
	skipped uint64 // scheduled firings that did not run (mcpwatch_probes_skipped_total's, calls aside)
	// observed are the tools the last probe listed (scrubbed), as the lock
	// compares them (nil after a failed probe): names, fingerprints and
	// description hashes (see retainedTools); lock is the lock status.Diff
	// was made against. With both, a changed lock is compared again at
	// once, without waiting for the next probe.
	observed []lockstore.Observed
	lock     *lockstore.Lock
	forbid   []string // the forbid status.Diff was made with
	// relocks is told of the lock each probe records (nil in tests
	// without a daemon): one older than the lock check's latest has the
	// check compare the servers again.
	relocks *relocks
	// fingerprints, and the tools of the last successful listing as the
	// status and the diff keep them (listed, names), are reused from probe
	// to probe; only the probe in flight uses them, as it records its
	// result.
	fingerprints runner.FingerprintCache
	listed       []lockstore.Observed
	names        []probe.Tool
	// callsSkipped are call firings skipped because the one before still
	// waited for the server's probe to end.
	callsSkipped uint64
	// watch is the listener of the server's tool changes, nil when none
	// (watch.go); announces is set once a probe found the server declares
	// tools.listChanged.
	watch     *watcher
	announces bool
	// warm is set once a probe of the server's command ended other than
	// at its deadline, and cleared when the configuration is reloaded:
	// until then a command that installs what it runs (npx -y) probes
	// within its start_timeout (config.Server.ProbeTimeout).
	warm bool
}

func newServer(parent context.Context, cfg config.Server, sched schedule, interval time.Duration, historyLimit int) *server {
	ctx, cancel := context.WithCancel(parent)
	s := &server{
		name:     cfg.Name,
		ctx:      ctx,
		cancel:   cancel,
		cfg:      cfg,
		sched:    sched,
		interval: interval,
		status: status.Server{
			Name:      cfg.Name,
			Transport: cfg.Transport,
			Schedule:  cfg.Schedule,
			Interval:  interval,
			Calls:     keepCalls(nil, cfg),
			Stdio:     stdioOf(nil, cfg),
		},
		history: newHistory(historyLimit),
	}
	s.judge() // pending: nothing recorded yet
	return s
}

// snapshot returns a copy of the status that shares nothing mutable with
// the server: Failures is replaced, never written, once published.
func (s *server) snapshot() status.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// setConfig takes a changed configuration. The remembered era is dropped
// when the server's target changed (eracache.SameTarget, the rule check's
// era cache follows): it may be another server. The change listener
// starts afresh when anything it uses changed (reach), a rotated header
// included.
func (s *server) setConfig(cfg config.Server, interval time.Duration, reach, sameTarget bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sameTarget {
		s.era = ""
		s.announces = false
	}
	if reach {
		s.stopWatch() // the next successful probe starts one again, if wanted
	} else if s.watch != nil && !wantsWatch(cfg, s.announces) {
		s.stopWatch()
	}
	s.status.Transport = cfg.Transport
	s.status.Schedule = cfg.Schedule
	s.status.Interval = interval
	s.status.Calls = keepCalls(s.status.Calls, cfg)
	s.status.Stdio = stdioOf(s.status.Stdio, cfg)
	s.judge() // a failing call whose contract left fails no more
}

// probeTimeout is the deadline of the server's next probe, with override
// (serve --timeout) when positive. Called with Daemon.mu held (for cfg).
func (s *server) probeTimeout(override time.Duration) time.Duration {
	s.mu.Lock()
	warm := s.warm
	s.mu.Unlock()
	return s.cfg.ProbeTimeout(override, !warm)
}

// isWarm reports whether the server's command has started since it was
// last configured.
func (s *server) isWarm() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm
}

// restart makes the next probe a first start again, as after a reload:
// the command may fetch a newer package (npx -y NAME@latest).
func (s *server) restart() {
	s.mu.Lock()
	s.warm = false
	s.mu.Unlock()
}

// judge judges the server's last probe, its diff and the latest outcome of
// each of its calls, and keeps the judgement in its status: the one place
// a server's state is decided, whenever one of them changes. Every output
// reads the judgement kept. Called with s.mu held.
func (s *server) judge() verdict.Judgement {
	st := &s.status
	st.Judgement = verdict.JudgeServer(st.Last, st.Diff, st.LatestCalls())
	return st.Judgement
}

// setCalls takes the call schedules of a plan, with a new generation.
// Called with Daemon.mu held.
func (s *server) setCalls(p serverPlan, gen uint64) {
	s.callGroups, s.callGen = p.calls, gen
	s.mu.Lock()
	s.status.CallInterval = p.callInterval
	s.mu.Unlock()
}

// keepCalls is the call status of cfg's calls: what calls has of a tool
// still contracted, a fresh one for a new contract, and the tools calls:
// auto chose while cfg still says calls: auto; nothing of a tool whose
// contract is gone (its series vanish).
func keepCalls(calls []status.Call, cfg config.Server) []status.Call {
	var out []status.Call
	for _, c := range cfg.Contracts {
		kept := status.Call{Tool: c.Tool}
		for _, old := range calls {
			if old.Tool == c.Tool {
				kept = old
			}
		}
		p := cfg.CallPlan(c)
		kept.Schedule, kept.Paced = p.Schedule, p.Why
		out = append(out, kept)
	}
	if cfg.AutoCalls > 0 {
		for _, old := range calls {
			if autoCall(old) && !slices.ContainsFunc(out, func(c status.Call) bool { return c.Tool == old.Tool }) {
				old.Schedule, old.Paced = cfg.CallSchedule, ""
				out = append(out, old)
			}
		}
	}
	return out
}

// autoCall reports whether a call's tool was chosen by calls: auto.
func autoCall(c status.Call) bool { return c.Last != nil && c.Last.Auto }

// recordCalls stores the outcomes of a probe's calls (res is the probe;
// auto says it made the calls: auto calls).
// Called with s.mu held. Calls is replaced, never written, once published.
// A tool calls: auto chose gets its entry on its first call; when a probe
// fails before the list, the tools it chose before count a call not made,
// as contracted ones do, and when a listing no longer gives it (its
// annotation changed, the tool left), its entry goes.
func (s *server) recordCalls(outcomes []contracts.Outcome, res *probe.Result, auto bool) {
	calls := slices.Clone(s.status.Calls)
	for _, o := range outcomes {
		i := slices.IndexFunc(calls, func(c status.Call) bool { return c.Tool == o.Tool })
		if i < 0 {
			if !o.Auto || s.cfg.AutoCalls == 0 {
				continue // its contract left while it ran
			}
			calls = append(calls, status.Call{Tool: o.Tool, Schedule: s.cfg.CallSchedule})
			i = len(calls) - 1
		}
		calls[i] = called(calls[i], o)
	}
	kept := calls[:0]
	for _, c := range calls {
		// calls: auto's choice is told by the rounds that make it (the
		// call_schedule's); another schedule's round says nothing of it.
		if auto && autoCall(c) && !slices.ContainsFunc(outcomes, func(o contracts.Outcome) bool { return o.Tool == c.Tool }) {
			if res.OK {
				continue // no longer chosen
			}
			c = called(c, contracts.Outcome{Tool: c.Tool, Input: c.Last.Input, Auto: true, Reason: contracts.ReasonProbeFailed,
				Started: res.Started, Attempts: []contracts.Attempt{},
				Message: "not called: the probe failed (" + string(res.Reason) + ") before the tools could be listed"})
		}
		kept = append(kept, c)
	}
	s.status.Calls = kept
}

// called is c after the outcome o of one more call.
func called(c status.Call, o contracts.Outcome) status.Call {
	last := retainedOutcome(o)
	c.Last, c.Calls = &last, c.Calls+1
	if !o.Passed {
		c.LastFailure = &last
		failures := make(map[probe.Reason]uint64, len(c.Failures)+1)
		maps.Copy(failures, c.Failures)
		failures[o.Reason]++
		c.Failures = failures
	}
	return c
}

// retainedOutcome is what the status keeps of a call until the next one:
// every attempt's one-line response and assertions, not the content the
// server answered with (up to the message cap, 4 MiB, per attempt), which
// no page reads.
func retainedOutcome(o contracts.Outcome) contracts.Outcome {
	o.Attempts = slices.Clone(o.Attempts)
	for i, a := range o.Attempts {
		if a.Call != nil {
			call := *a.Call
			call.Content, call.StructuredContent = nil, nil
			o.Attempts[i].Call = &call
		}
	}
	return o
}

// diff compares the last probe with lock. A server not probed yet, or whose
// last probe failed, observed nothing: its diff keeps only what the lock
// expects. Called with s.mu held; the observed tools have their
// fingerprints already (see retainedTools), so none is computed under it.
// Its lists are shared with the servers whose diff has the same
// (sharedDiff): it is kept until the next probe.
func (s *server) diff(lock *lockstore.Lock, forbid []string) lockstore.Diff {
	entry, locked := lock.Entry(s.name)
	if last := s.status.Last; last == nil || !last.OK {
		return sharedDiff(lockstore.Diff{Locked: locked, Expected: expectedNames(entry, locked)})
	}
	return sharedDiff(lockstore.Compare(entry, locked, s.observed, forbid))
}

// retainedTools is what the daemon keeps of the tools a probe listed until
// the next one: each name with its schema fingerprint and description hash,
// all that comparing with a lock reads, and not the descriptions and
// schemas themselves, which a server may make as large as the probe's list
// cap (16 MiB) and the daemon would hold for as long as it runs. cache
// reuses the fingerprints of unchanged schemas; the caller holds s's flight,
// so no other probe of s uses it. Servers that keep the same list share one
// (sharedObserved).
func retainedTools(observed, prev []lockstore.Observed, cache *runner.FingerprintCache) []lockstore.Observed {
	switch {
	case observed == nil:
		return nil
	case len(observed) == 0:
		return []lockstore.Observed{}
	}
	_ = cache.Fill(context.Background(), observed) // cannot fail: the context never ends
	var kept []lockstore.Observed                  // nil while equal to prev
	if len(prev) != len(observed) {
		kept = make([]lockstore.Observed, len(observed))
	}
	for i, o := range observed {
		var was lockstore.Observed
		if i < len(prev) {
			was = prev[i]
		}
		// Fill gave each its fingerprint and description hash, the cache's
		// own strings while unchanged.
		t := lockstore.Observed{Name: shared(o.Name, was.Name), Fingerprint: o.Fingerprint, DescriptionHash: o.DescriptionHash}
		if kept == nil {
			if t.Name == was.Name && t.Fingerprint == was.Fingerprint && t.DescriptionHash == was.DescriptionHash {
				continue
			}
			kept = make([]lockstore.Observed, len(observed))
			copy(kept, prev[:i])
		}
		kept[i] = t
	}
	if kept == nil {
		return prev // published, never written: shared
	}
	return sharedObserved(kept)
}

// shared is s as the daemon keeps it: was when equal, else one copy
// interned for every server that keeps the same string (replicas of one
// server list the same names and hashes).
func shared(s, was string) string {
	if s == was {
		return was
	}
	return unique.Make(s).Value()
}

// retainedResult is what the status keeps of a probe's result: its tools
// by name alone (the page, the API and the metrics read names and counts;
// descriptions and schemas are compared through retainedTools' hashes),
// and no transcript (a debug probe's goes to its requester). prev is the
// tools the status kept of the last probe: the same names share them, and
// servers that list the same names share one list (sharedNames).
func retainedResult(res *probe.Result, prev []probe.Tool) *probe.Result {
	kept := *res
	kept.Transcript, kept.Operations = nil, nil // the histograms have them
	if res.Tools != nil {
		kept.Tools = prev
		if !slices.EqualFunc(res.Tools, prev, func(a, b probe.Tool) bool { return a.Name == b.Name }) {
			kept.Tools = make([]probe.Tool, len(res.Tools))
			for i, t := range res.Tools {
				kept.Tools[i] = probe.Tool{Name: shared(t.Name, "")}
			}
			kept.Tools = sharedNames(kept.Tools)
		}
	}
	return &kept
}

// relock compares the last probe with lock again, if its diff was made
// against another lock, so that a tool or server taken out of the lock
// leaves no stale series and one added shows as missing before the next
// probe. It returns the change of judgement, if there was a probe to judge.
func (s *server) relock(lock *lockstore.Lock, forbid []string) (t transition, judged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == lock {
		return transition{}, false
	}
	// The observed tools carry their fingerprints and description hashes
	// (see retainedTools): any lock compares with them as they are.
	s.lock, s.forbid = lock, forbid
	s.status.Diff = s.diff(lock, forbid)
	was := s.status.Judgement
	now := s.judge()
	if s.status.Last == nil {
		return transition{}, false // pending: nothing to judge yet
	}
	return transition{was: was, now: now, res: s.status.Last, diff: s.status.Diff, calls: s.status.Calls}, true
}

// sameTools reports whether a and b are the same kept list (not only
// equal: retainedTools shares the last one when nothing changed).
func sameTools(a, b []lockstore.Observed) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
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

// recordResult stores a finished probe, with the tools it observed
// (kept as retainedTools keeps them) compared with lock, and returns the
// change of judgement for the state-change log.
// round is the calls the probe made, nil when it made none.
func (s *server) recordResult(trigger string, res *probe.Result, observed []lockstore.Observed, lock *lockstore.Lock, forbid []string, round *callRound) transition {
	// What is kept until the next probe is bounded: tool names and hashes,
	// computed before s.mu is taken, so a scrape never waits on them.
	full := res
	res, observed = retainedResult(res, s.names), retainedTools(observed, s.listed, &s.fingerprints)
	s.listed, s.names = observed, res.Tools // nil after a failure: a failing server keeps no tools
	s.mu.Lock()
	defer s.mu.Unlock()

	st := &s.status
	st.Operations = metrics.RecordOperations(st.Operations, full)
	// A steady server's diff is the last one: the same lock, the same
	// kept tools (retainedTools returns the last slice when nothing
	// changed) and the same forbid make the same comparison.
	same := res.OK && st.Last != nil && st.Last.OK && s.lock == lock && sameTools(s.observed, observed) && slices.Equal(s.forbid, forbid)
	st.Last = res
	if started(res) {
		s.warm = true
	}
	s.observed, s.lock, s.forbid = nil, lock, forbid
	s.relocks.recorded(lock)
	if res.OK {
		s.observed = observed
	}
	if !same {
		st.Diff = s.diff(lock, forbid)
	}
	st.Probes++
	st.Stdio = stdioAfter(st.Stdio, res)
	if res.OK {
		st.LastOK = res
		st.LastSuccess = res.Started.Add(res.Timings.Total)
		if res.Era != "" {
			s.era = res.Era
		}
	} else {
		st.LastOK = infoOf(st.LastOK)
		failures := make(map[probe.Reason]uint64, len(st.Failures)+1)
		maps.Copy(failures, st.Failures)
		failures[res.Reason]++
		st.Failures = failures
		if eracache.ForgetsEra(res.Reason) {
			s.era = ""
		}
	}

	if round != nil && round.outcomes != nil {
		s.recordCalls(round.outcomes, res, round.auto)
		if res.OK {
			s.backOff(round.outcomes, round.gap, time.Now())
		}
	}

	was := st.Judgement // read before judge replaces it
	t := transition{first: s.seq == 0, was: was, now: s.judge(), res: res, diff: st.Diff, calls: st.Calls}
	s.seq++
	s.history.add(newRecord(s.seq, trigger, res, st.Diff, t.now))
	return t
}

// started reports whether a probe shows the server's command has started:
// it ended other than at its deadline, after the process was spawned (a
// probe that could not build its target, or found a credential empty,
// started nothing).
func started(res *probe.Result) bool {
	switch res.Reason {
	case probe.ReasonTimeout, probe.ReasonConfig, probe.ReasonCredentialMissing, probe.ReasonCanceled:
		return false
	}
	return true
}

// stdioOf is the stdio status of a server configured as cfg, keeping what
// was (nil: none yet) knows of its process; nil for a remote server.
func stdioOf(was *status.Stdio, cfg config.Server) *status.Stdio {
	if cfg.Command == "" {
		return nil
	}
	st := status.Stdio{Configured: cfg.StdioMode}
	if was != nil {
		st = *was
		st.Configured = cfg.StdioMode
	}
	return &st
}

// stdioAfter is the stdio status after the probe res: whether its server
// runs on (a live session kept), and when and why it last started.
func stdioAfter(was *status.Stdio, res *probe.Result) *status.Stdio {
	if was == nil {
		return nil
	}
	st := *was
	switch sess := res.Session; {
	case sess != nil:
		st.Live = sess.Kept
		if sess.Start != "" {
			st.Started, st.Start = sess.Started, sess.Start
			st.Starts++
		}
	case res.Reason == probe.ReasonConfig || res.Reason == probe.ReasonCredentialMissing ||
		res.Reason == probe.ReasonCanceled || res.Reason == probe.ReasonSpawnFailed:
		st.Live = false // nothing started
	default:
		st.Live, st.Started, st.Start = false, res.Started, ""
		st.Starts++
	}
	return &st
}

// infoOf is what the status keeps of the last successful probe once a
// failed one has replaced it as Last: what the info series, the page and the
// API read of it (transport, era, versions, server name), not its tools.
// Only the latest result keeps its tool list.
func infoOf(ok *probe.Result) *probe.Result {
	if ok == nil || ok.Tools == nil && ok.Warnings == nil && ok.StderrTail == "" {
		return ok // nothing to drop, or dropped already
	}
	return &probe.Result{
		OK:              true,
		Transport:       ok.Transport,
		Era:             ok.Era,
		ProtocolVersion: ok.ProtocolVersion,
		ServerName:      ok.ServerName,
		ServerVersion:   ok.ServerVersion,
		Started:         ok.Started,
		Timings:         probe.Timings{Total: ok.Timings.Total},
		Duration:        ok.Duration,
	}
}

// details is what the server page and the JSON API show of one server.
type details struct {
	Status       status.Server
	History      []Record
	Skipped      uint64
	Era          probe.Era // remembered for the next probe
	CallSchedule string    // "" for a server without contracts
}

// details returns the server's status and what the API and the page add to
// it; its history only if history (a list of every server shows none).
func (s *server) details(history bool) details {
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := details{Status: s.status, Skipped: s.skipped, Era: s.era}
	if history {
		dt.History = s.history.records()
	}
	if len(s.status.Calls) > 0 {
		dt.CallSchedule = s.cfg.CallSchedule
	}
	return dt
}

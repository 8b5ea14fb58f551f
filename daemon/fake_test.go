package daemon

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The tests of the daemon's timing (schedules, reloads, the first round,
// flights, the pool) run in a testing/synctest bubble with a fakeProber as
// Options.Probe: the bubble's clock moves only when every goroutine of the
// test waits, so a schedule of 10 ms or of an hour takes no real time, and
// what a test sees after sim.settle is the same on an idle machine and on
// a loaded one. Tests where the real process or the real network is the
// point (leaks, kills, secrets on the wire, HTTP timeouts) start real
// servers with start (main_test.go).

// fakeProber is a ProbeFunc that answers without a server, keeping
// runner.Probe's contract: it takes a slot of the pool (and a stdio slot
// for a command), calls OnStart, takes the time its server is set to take
// (or waits to be released), and makes the calls of a probe asked for
// them. A server it has not been told of lists fakeTools and passes.
type fakeProber struct {
	mu      sync.Mutex
	servers map[string]*fakeServer
	// Across servers: probes listing tools now, and the most at once;
	// the servers in the order their probes started (took their slot).
	inFlight, maxInFlight int
	started               []string
	// entered counts the probes asked of it, before their wait for a
	// slot of the pool.
	entered int
}

// fakeServer is how one server answers, and what its probes were asked.
// Fields are read under fakeProber.mu: change them with fakeProber.set.
type fakeServer struct {
	tools []string // listed; nil lists fakeTools
	// readOnly are the listed tools annotated readOnlyHint: true, which
	// calls: auto may choose.
	readOnly []string
	fail     probe.Reason // the probe fails with this reason ("" succeeds)
	took     time.Duration
	era      probe.Era
	stderr   string
	// credentials are the expiries and refreshes the probe reports.
	credentials *probe.CredentialStatus
	// calls are the outcomes of the tools' canary calls; a contracted
	// tool not in it passes.
	calls map[string]contracts.Outcome
	// hold, when set, keeps every probe in flight until a value is
	// received from it or it is closed (or the probe is canceled).
	hold chan struct{}

	// What its probes were asked, in order.
	probes int
	eras   []probe.Era // the era hint of each probe
	warm   []bool      // whether each probe was told the command had started
	// budgets are the time each probe had from its start to the caller's
	// Deadline (0 for a probe without one).
	budgets []time.Duration
	calling int // probes that made the canary calls
	// called counts the calls made of each tool (a probe that failed
	// before its list made none).
	called  map[string]int
	retries int // probes asked to honour the retry policies
	now     int // in flight now
	most    int // most in flight at once
	waiting int // held now
}

var fakeTools = []string{"fetch_daily_report", "list_report_dates"}

func newFakeProber() *fakeProber {
	return &fakeProber{servers: map[string]*fakeServer{}}
}

// set changes how the server name answers from its next probe on.
func (f *fakeProber) set(name string, change func(*fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.server(name))
}

// get returns a copy of what f knows of the server.
func (f *fakeProber) get(name string) fakeServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.server(name)
}

// server is the server of that name, made on first use. Called with f.mu
// held.
func (f *fakeProber) server(name string) *fakeServer {
	s, ok := f.servers[name]
	if !ok {
		s = &fakeServer{}
		f.servers[name] = s
	}
	return s
}

func (f *fakeProber) probe(ctx context.Context, pool *runner.Pool, s config.Server, req runner.Request) runner.Observation {
	started := time.Now()
	f.mu.Lock()
	f.entered++
	f.mu.Unlock()
	wctx := ctx
	if !req.Deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	release, err := pool.Acquire(wctx, s.Command != "")
	if err != nil {
		obs := f.canceled(s, req, started)
		if ctx.Err() == nil { // the caller's deadline passed, as runner.Probe says it
			obs.Result.Error = "not started: no probe slot was free before the caller's deadline"
		}
		return obs
	}
	defer release()
	done := func() {}
	if req.OnStart != nil {
		done = req.OnStart()
	}
	defer done()

	f.mu.Lock()
	fs := f.server(s.Name)
	f.started = append(f.started, s.Name)
	fs.probes++
	fs.eras = append(fs.eras, req.Era)
	fs.warm = append(fs.warm, req.Warm)
	var budget time.Duration // 0: no deadline of the caller's
	if !req.Deadline.IsZero() {
		budget = time.Until(req.Deadline)
	}
	fs.budgets = append(fs.budgets, budget)
	if req.Calls && s.HasCalls() {
		fs.calling++
	}
	if req.Retries {
		fs.retries++
	}
	fs.now++
	fs.most = max(fs.most, fs.now)
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	took, hold := fs.took, fs.hold
	if hold != nil {
		fs.waiting++
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		fs.now--
		f.inFlight--
		if hold != nil {
			fs.waiting--
		}
		f.mu.Unlock()
	}()

	var wait, cut <-chan time.Time
	if took > 0 {
		wait = time.After(took)
	}
	if !req.Deadline.IsZero() {
		cut = time.After(time.Until(req.Deadline))
	}
	fail := probe.ReasonNone
	if hold != nil || wait != nil {
		select {
		case <-hold:
		case <-wait:
		case <-cut:
			fail = probe.ReasonTimeout // at the caller's deadline, as runner.Probe
		case <-ctx.Done():
			return f.canceled(s, req, started)
		}
	}

	f.mu.Lock()
	if fail == probe.ReasonNone {
		fail = fs.fail
	}
	res := &probe.Result{
		OK: fail == "", Reason: fail, Transport: s.Transport,
		Era: fs.era, ProtocolVersion: "2025-06-18", ServerName: "fake", ServerVersion: "1.0.0",
		StderrTail: fs.stderr, Started: started, Tools: []probe.Tool{}, Credentials: fs.credentials,
	}
	if res.Era == "" {
		res.Era = probe.EraModern
	}
	tools := fs.tools
	if tools == nil {
		tools = fakeTools
	}
	calls := maps.Clone(fs.calls)
	readOnly := fs.readOnly
	f.mu.Unlock()
	res.Timings.Total = time.Since(started)
	res.Duration = res.Timings.Total.Seconds()

	obs := runner.Observation{Result: res}
	if res.OK {
		for _, name := range tools {
			t := probe.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
			if slices.Contains(readOnly, name) {
				t.Annotations = json.RawMessage(`{"readOnlyHint":true}`)
			}
			res.Tools = append(res.Tools, t)
			obs.Tools = append(obs.Tools, lockstore.Observed{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
		if req.Fingerprint {
			if err := req.Fingerprints.Fill(ctx, obs.Tools); err != nil {
				return f.canceled(s, req, started)
			}
		}
	} else {
		res.Error = "the fake server fails with " + string(res.Reason)
	}
	if req.Calls && s.HasCalls() {
		for _, c := range s.Contracts {
			o, ok := calls[c.Tool]
			switch {
			case !res.OK:
				o = contracts.Outcome{Reason: contracts.ReasonProbeFailed, Message: "not called: the probe failed"}
			case !ok:
				o = contracts.Outcome{Passed: true}
			}
			if res.OK {
				f.count(s.Name, c.Tool)
			}
			o.Tool, o.Started, o.Duration = c.Tool, started, time.Millisecond
			obs.Calls = append(obs.Calls, o)
		}
		if obs.Calls == nil {
			obs.Calls = []contracts.Outcome{} // calls were asked for, as runner.Probe says
		}
		if res.OK {
			// calls: auto, as runner.Probe makes them.
			for _, c := range contracts.Auto(res.Tools, s.AutoCalls, func(tool string) bool {
				return slices.ContainsFunc(s.Contracts, func(k contracts.Contract) bool { return k.Tool == tool })
			}) {
				o, ok := calls[c.Tool]
				if !ok {
					o = contracts.Outcome{Passed: true}
				}
				f.count(s.Name, c.Tool)
				o.Tool, o.Input, o.Auto, o.Started, o.Duration = c.Tool, c.Input, true, started, time.Millisecond
				obs.Calls = append(obs.Calls, o)
			}
		}
	}
	return obs
}

// calledOf is how many calls were made of each tool of the server.
func (f *fakeProber) calledOf(name string) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.server(name).called)
}

// count records a call of tool on the server of that name.
func (f *fakeProber) count(name, tool string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs := f.server(name)
	if fs.called == nil {
		fs.called = map[string]int{}
	}
	fs.called[tool]++
}

// canceled is the Observation of a probe whose context ended, as
// runner.Probe returns it.
func (f *fakeProber) canceled(s config.Server, req runner.Request, started time.Time) runner.Observation {
	res := &probe.Result{Reason: probe.ReasonCanceled, Error: "canceled", Transport: s.Transport, Tools: []probe.Tool{}, Started: started}
	obs := runner.Observation{Result: res}
	if req.Calls && s.HasCalls() {
		for _, c := range s.Contracts {
			obs.Calls = append(obs.Calls, contracts.Outcome{Tool: c.Tool, Reason: contracts.ReasonProbeFailed})
		}
	}
	return obs
}

// failedCall is the outcome of a canary call whose result was an error.
func failedCall(message string) contracts.Outcome {
	return contracts.Outcome{Reason: contracts.ReasonIsError, Message: message,
		Attempts: []contracts.Attempt{{Response: "isError: " + message}}}
}

// sim is a daemon in a synctest bubble, its probes answered by a
// fakeProber, its HTTP handler called in process (the bubble has no
// network).
type sim struct {
	t       *testing.T
	d       *Daemon
	fake    *fakeProber
	logs    *observer.ObservedLogs
	handler http.Handler
	dir     string
}

// fakeServerConfig is the configuration of a server the fake answers: a
// URL nothing listens on, never reached.
func fakeServerConfig(extra map[string]any) map[string]any {
	return merge(map[string]any{"url": "http://127.0.0.1:1/mcp", "transport": "http"}, extra)
}

// simulate starts a daemon on the configuration doc, written into dir
// (which holds the test's lock and secret files), with its probes answered
// by fake. It must run in a synctest bubble; the daemon is closed when the
// test ends. The first round is spread over the default 5 s, unless opts
// says otherwise.
func simulate(t *testing.T, dir string, doc map[string]any, fake *fakeProber, opts Options) *sim {
	t.Helper()
	path := writeConfig(t, dir, doc)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	if opts.Logger == nil {
		opts.Logger = zap.New(core)
	}
	opts.Probe = fake.probe
	d, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("new daemon: %v", err)
	}
	s := &sim{t: t, d: d, fake: fake, logs: logs, handler: d.Handler(), dir: dir}
	d.Start()
	t.Cleanup(func() {
		if err := d.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// bubble runs a test in a synctest bubble.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// settle waits until every goroutine of the daemon waits (on a timer, a
// channel, a held probe): what the test reads then cannot change under it.
func (s *sim) settle() { synctest.Wait() }

// advance moves the bubble's clock by d, running everything due meanwhile,
// and settles.
func (s *sim) advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// until advances the bubble's clock in steps of a five-hundredth of limit
// (at least 10 ms) until cond holds, failing the test once limit has passed
// on that clock.
func (s *sim) until(what string, limit time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	step := max(10*time.Millisecond, limit/500)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not within %s on the daemon's clock", what, limit)
		}
		time.Sleep(step)
	}
}

// ready advances the clock until the first round has finished.
func (s *sim) ready() {
	s.t.Helper()
	s.until("the first round", time.Minute, s.d.Ready)
}

// serve answers one request in process.
func (s *sim) serve(method, path string) (int, string) {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.String()
}

func (s *sim) get(path string) (int, string) { return s.serve("GET", path) }

// getAsync sends a request that may wait (a /probe) from a goroutine of
// the bubble, and delivers its answer.
func (s *sim) getAsync(path string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		out <- reply{code: rec.Code, body: rec.Body.String(), retry: rec.Header().Get("Retry-After")}
	}()
	return out
}

// status is a server through the JSON API.
func (s *sim) status(name string) apiServer {
	s.t.Helper()
	code, body := s.get("/api/v1/servers/" + name)
	if code != http.StatusOK {
		s.t.Fatalf("GET /api/v1/servers/%s: %d %s", name, code, body)
	}
	var a apiServer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		s.t.Fatalf("decode: %v\n%s", err, body)
	}
	return a
}

// metricsText scrapes /metrics.
func (s *sim) metricsText() string {
	s.t.Helper()
	code, body := s.get("/metrics")
	if code != http.StatusOK {
		s.t.Fatalf("GET /metrics: %d", code)
	}
	return body
}

// messages are the info-or-above lines about the server.
func (s *sim) messages(server string) []string {
	var out []string
	for _, e := range s.logs.All() {
		if e.Level >= zapcore.InfoLevel && e.ContextMap()["server"] == server {
			out = append(out, e.Message)
		}
	}
	return out
}

// line returns the fields of the first line with msg about server.
func (s *sim) line(server, msg string) map[string]any {
	s.t.Helper()
	for _, e := range s.logs.All() {
		if e.Message == msg && e.ContextMap()["server"] == server {
			return e.ContextMap()
		}
	}
	s.t.Fatalf("no line %q for %s:\n%v", msg, server, s.messages(server))
	return nil
}

// probes is the number of probes recorded for the server.
func (s *sim) probes(name string) uint64 {
	srv, ok := s.d.lookup(name)
	if !ok {
		return 0
	}
	return srv.snapshot().Probes
}

func (s *sim) server(name string) *server {
	srv, ok := s.d.lookup(name)
	if !ok {
		s.t.Fatalf("no server %s", name)
	}
	return srv
}

// The fake keeps runner.Probe's contract where the daemon relies on it.
func TestFakeProberKeepsTheContract(t *testing.T) {
	bubble(t, func(t *testing.T) {
		f := newFakeProber()
		pool := runner.NewPool(1, 1)
		cfg := config.Server{Name: "a", URL: "http://127.0.0.1:1/mcp"}
		f.set("a", func(s *fakeServer) { s.took = time.Second })
		var started, ended int
		req := runner.Request{OnStart: func() func() { started++; return func() { ended++ } }}
		go f.probe(t.Context(), pool, cfg, req)
		synctest.Wait()
		// The first holds the one slot: a second waits, and is canceled.
		ctx, cancel := context.WithCancel(t.Context())
		got := make(chan runner.Observation, 1)
		go func() { got <- f.probe(ctx, pool, cfg, req) }()
		synctest.Wait()
		if f.get("a").probes != 1 || started != 1 {
			t.Fatalf("a probe without a slot started")
		}
		cancel()
		if obs := <-got; obs.Result.Reason != probe.ReasonCanceled {
			t.Errorf("canceled while waiting: %+v", obs.Result)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if started != 1 || ended != 1 || !slices.Equal(f.get("a").eras, []probe.Era{""}) {
			t.Errorf("OnStart %d, done %d, eras %v", started, ended, f.get("a").eras)
		}
	})
}

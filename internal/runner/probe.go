package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Request is how to probe a server this once. Zero values take the
// defaults.
type Request struct {
	// Timeout, when positive, replaces the server's own deadline (the
	// CLI's --timeout).
	Timeout time.Duration
	// Warm says the server's command has started since it was last
	// (re)configured, so a command that installs what it runs no longer
	// gets its start_timeout (config.Server.ProbeTimeout). Unset (check,
	// lock, probe: every start is a first one), it does.
	Warm bool
	// Deadline, when set, is when the probe must have ended whatever its
	// timeout: a caller's own deadline, such as a Prometheus scrape's. The
	// probe's deadline is the earlier of Deadline and its timeout counted
	// from when it takes its slot, and a probe that ends there fails with
	// reason timeout, as at its own; one still waiting for its slot at
	// Deadline never starts (reason canceled: the server was not reached).
	Deadline time.Time
	// Era is a hint, such as the era the server spoke last time: tried
	// first, and detected afresh in the same probe when it proves wrong. It
	// is ignored when the server pins an era.
	Era probe.Era
	// Options bound the probe (message size, pages, stderr tail).
	Options probe.Options
	// Lookup reads a variable for ${VAR} expansion; os.LookupEnv fits.
	// Nil reads none: every variable is unset.
	Lookup func(string) (string, bool)
	// Fingerprint has each observed tool's schema fingerprint computed
	// within the probe's deadline (a probe whose deadline passes while it
	// fingerprints fails with reason timeout), so that comparing with a
	// fingerprinted lock later costs no more than a string comparison, and
	// never runs under a caller's lock. Fingerprints, when set, reuses the
	// fingerprints of schemas unchanged since the last probe it was given
	// to; it must not be shared by probes that run at once.
	Fingerprint  bool
	Fingerprints *FingerprintCache
	// OnStart, when set, is called as the probe starts (once it has its
	// slot, or at once when its target cannot be built, which needs none),
	// and the func it returns when the probe ends. A probe canceled while
	// it waits never starts.
	OnStart func() (done func())
	// OAuth keeps the OAuth clients of servers with an auth: block across
	// probes (discovery and tokens are reused); nil gives each probe a new
	// client.
	OAuth *oauth.Cache
	// Calls makes the server's contracted canary calls after tools/list,
	// in the same session; the deadline grows by each contract's call
	// timeout. With calls: auto in the configuration (config.Server's
	// AutoCalls), it also makes that many calls contracts.Auto chooses,
	// as AutoCalls below does. Retries honours the contracts' retry
	// policies.
	Calls   bool
	Retries bool
	// AutoCalls, when positive, also makes (Calls or not) the calls
	// contracts.Auto chooses from the tools the server lists, at most
	// AutoCalls, after the server's own contracts and leaving out the
	// tools they call: read-only tools that need no input, each called
	// with {}; the deadline grows by a call timeout for each. mcpwatch init
	// samples the answers of such tools so.
	AutoCalls int
	// Live, when set, keeps a stdio server running between probes (see
	// probe.Live): the probe runs on it, started afresh as it says and
	// once it has run for RestartEvery (config.Server.RestartAfter; zero:
	// no limit). Unset, each probe starts the server and ends it (check,
	// lock, init).
	Live         *probe.Live
	RestartEvery time.Duration
	// Login signs in for the server's auth: block instead of using its
	// stored refresh token (mcpwatch login): the authorization code grant,
	// the person reached through Login, the refresh token stored where the
	// block says. The deadline (Timeout) covers the sign-in.
	Login *oauth.Login
	// Issuer asks the services that issued the server's credentials about
	// them (internal/issuer), beside the probe, its answers kept and
	// shared across probes; nil asks none.
	Issuer *issuer.Checker
}

// Observation is one server probed once.
type Observation struct {
	// Result is what the probe saw, scrubbed of the server's secret
	// values: fit to show, log and keep. A target that could not be built
	// (an unset variable, an unreadable secret file) is a Result with
	// probe.ReasonConfig; a probe canceled while it waited for its slot,
	// one with probe.ReasonCanceled.
	Result *probe.Result
	// Tools are the tools of Result, for comparing with the lock and
	// building lock entries: scrubbed like everything else, so that no
	// diff, report, page or lock derived from them carries a secret (the
	// fingerprints are of the scrubbed schemas, and stay the same when a
	// secret a schema echoes is rotated). Nil when the probe failed.
	Tools []lockstore.Observed
	// SecretNames are the tools whose name held a secret value, as
	// scrubbed: such a name must not be locked, since the lock is
	// committed (the name the server sent is the secret's echo).
	SecretNames []string
	// Timeout is the probe's deadline (with its calls, when it made them).
	Timeout time.Duration
	// Calls are the outcomes of the server's contracts, one per contract
	// in the order of their tools, scrubbed like Result; nil when the
	// probe made no calls (Request.Calls unset, or the server has none).
	// A probe that failed before listing gives each the reason
	// probe_failed.
	Calls []contracts.Outcome
	// Login is what a sign-in did (Request.Login); nil when there was none
	// (it failed, or the server asked for no authorization).
	Login *oauth.LoginOutcome
}

// Probe probes s once (s normalized, as config.Load leaves every server),
// in three steps: it builds the target now (launch.Build, the one
// step that reads and expands what the configuration names); waits for a
// slot in pool and probes within the deadline, which starts once the slot
// is taken; and judges what the probe saw (judge: scrubbed, then read
// once). It always returns a Result; ctx ending while it waits or probes
// makes it a canceled one.
func Probe(ctx context.Context, pool *Pool, s config.Server, req Request) Observation {
	started := time.Now()
	b, err := launch.Build(s, req.Lookup, launch.BuildOptions{Timeout: req.Timeout, Warm: req.Warm,
		Calls: req.Calls, AutoCalls: req.AutoCalls, OAuth: req.OAuth, Login: req.Login})
	if err != nil || len(b.Missing) > 0 {
		defer onStart(req)()
		return unprobed(b, Unbuilt(b, err, started))
	}
	target, client := b.Target, b.Client
	if target.Era == "" || target.Era == probe.EraAuto {
		target.EraHint = req.Era
	}
	issuers := func() []probe.IssuerCheck { return nil }
	if req.Issuer != nil && b.IssuerCheck {
		issuers = askIssuers(ctx, req.Issuer, target, probeTimeout(b.Timeout, req.Deadline))
	}
	release, err := acquire(ctx, pool, target.Command != "", req.Deadline)
	if err != nil {
		issuers()
		return unprobed(b, failed(b, probe.ReasonCanceled, err.Error(), time.Now()))
	}
	done := onStart(req)
	defer release()
	defer done()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout(b.Timeout, req.Deadline))
	defer cancel()

	// What the scrubber removes: the server's secrets, and the tokens an
	// OAuth client obtained so far (during the probe, too).
	scrubberNow := func() Scrubber { return ScrubberOf(b, target) }
	opts := req.Options
	var outcomes []contracts.Outcome
	if b.Calls || b.Auto > 0 {
		own := b
		if !b.Calls {
			own.Contracts = nil
		}
		opts.AfterList = callHook(own, req.Retries, credentialNames(b.Given), scrubberNow, issuers, &outcomes)
	}
	said := run(pctx, req.Live, target, opts, req.RestartEvery)
	checks := issuers()
	said.Credentials = withIssuers(credentialStatus(target, client, b.Given), checks)
	said.Warnings = append(said.Warnings, issuerWarnings(checks)...)

	j := judging{built: b, scrub: scrubberNow(), warm: req.Warm}
	if req.Fingerprint {
		j.fingerprint = func(tools []lockstore.Observed) probe.Reason {
			switch {
			case req.Fingerprints.Fill(pctx, tools) == nil:
				return probe.ReasonNone
			case ctx.Err() != nil:
				return probe.ReasonCanceled
			}
			return probe.ReasonTimeout
		}
	}
	obs := judge(said, outcomes, j)
	if client != nil && req.Login != nil {
		obs.Login = client.LastLogin()
	}
	return obs
}

// unprobed is the Observation of a server that was not probed (res says
// why): its contracts are not called either.
func unprobed(b launch.Built, res *probe.Result) Observation {
	obs := Observation{Result: res, Timeout: b.Timeout}
	if b.Calls {
		obs.Calls = notCalled(b, res)
	}
	return obs
}

// probeTimeout bounds one probe, and the issuers' checks beside it (a
// check never holds a probe past it): its deadline, and the caller's.
func probeTimeout(timeout time.Duration, deadline time.Time) time.Duration {
	if !deadline.IsZero() {
		timeout = min(timeout, time.Until(deadline))
	}
	return timeout
}

// acquire takes a slot of pool for a probe (a stdio one too when stdio),
// waiting until ctx ends or deadline (zero: none) passes. Its error says
// which, for the Result of a probe that never started.
func acquire(ctx context.Context, pool *Pool, stdio bool, deadline time.Time) (release func(), err error) {
	wctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	release, err = pool.Acquire(wctx, stdio)
	if err == nil {
		return release, nil
	}
	if ctx.Err() == nil {
		bound := "defaults.concurrency"
		if stdio {
			bound = "defaults.stdio_concurrency"
		}
		return nil, fmt.Errorf("not started: no probe slot was free before the caller's deadline (%s probes were running)", bound)
	}
	return nil, errors.New("canceled before the probe started")
}

// Installing explains the timeout of a first start of a command that
// installs what it runs, when an install is plausible (see
// installPlausible): it may have been still installing, and which
// setting gives it longer. Any other result is returned as it is: a
// package already in npm's cache was not installing, and saying it might
// have been sends people after the wrong cause.
func Installing(res *probe.Result, s config.Install) *probe.Result {
	how := s.Installs
	if res.Reason != probe.ReasonTimeout || how == "" || !installPlausible(s, res.StderrTail, npmCache(s)) {
		return res
	}
	explained := *res
	explained.Error = fmt.Sprintf("%s; %s installs the package before it starts, which may still have been under way: "+
		"raise start_timeout (%s now; defaults.start_timeout, or the server's own, in mcpwatch.yml) or give a longer --timeout, "+
		"or run the command once by hand so its cache holds the package", res.Error, how, s.StartTimeout)
	return &explained
}

// installPlausible: npm said on stderr that it installs, or the command is
// npx (or npm exec) and its package is neither in a node_modules folder
// where the server starts (or above it) nor in npm's npx cache (cache);
// any other installer (uvx, docker run...) keeps the benefit of the
// doubt.
func installPlausible(s config.Install, stderr, cache string) bool {
	for line := range strings.Lines(stderr) {
		l := strings.ToLower(line)
		if strings.Contains(l, "will be installed") || strings.Contains(l, "need to install") ||
			strings.HasPrefix(strings.TrimSpace(l), "npm http fetch") || strings.Contains(l, "added ") && strings.Contains(l, " packages") {
			return true
		}
	}
	pkg, ok := npxPackage(s)
	if !ok {
		return true
	}
	if installedNearby(s.Dir, pkg) {
		return false
	}
	if cache == "" {
		return true
	}
	found, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", filepath.FromSlash(pkg), "package.json"))
	return len(found) == 0
}

// installedNearby: npx runs a package installed in the node_modules of the
// folder it starts in (dir, else mcpwatch's own), or of a folder above it,
// without installing anything.
func installedNearby(dir, pkg string) bool {
	dir, err := filepath.Abs(dir) // "" is the working directory
	if err != nil {
		return false
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")); err == nil && fi.Mode().IsRegular() {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// npxPackage is the package an npx (or npm exec) command runs, without its
// version: "@scope/name" of "-y @scope/name@1.2.3".
func npxPackage(s config.Install) (string, bool) {
	args := s.Args
	switch how := s.Installs; how {
	case "npx":
	case "npm exec":
		args = args[1:]
	default:
		return "", false
	}
	pkg := ""
	for i := 0; i < len(args) && pkg == ""; i++ {
		a := args[i]
		switch {
		case a == "-p" || a == "--package":
			if i+1 < len(args) {
				pkg = args[i+1]
			}
		case strings.HasPrefix(a, "--package="):
			pkg = strings.TrimPrefix(a, "--package=")
		case a == "--":
		case strings.HasPrefix(a, "-"):
		default:
			pkg = a
		}
	}
	if i := strings.LastIndex(pkg, "@"); i > 0 {
		pkg = pkg[:i]
	}
	if pkg == "" || strings.ContainsAny(pkg, `\:`) || strings.Contains(pkg, "..") {
		return "", false
	}
	return pkg, true
}

// npmCache is npm's cache folder for the server: its npm_config_cache,
// mcpwatch's, or ~/.npm; "" when none is known.
func npmCache(s config.Install) string {
	if c := s.NpmCache; c != "" && !strings.Contains(c, "$") {
		return c
	}
	if c := os.Getenv("npm_config_cache"); c != "" {
		return c
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".npm")
	}
	return ""
}

// endedEarly turns a probe that saw the server's tools into one that
// failed while they were fingerprinted: at its deadline (reason timeout),
// or canceled by the caller (canceled).
func endedEarly(res *probe.Result, reason probe.Reason) *probe.Result {
	failed := *res
	failed.OK, failed.Reason, failed.Error = false, reason, "the deadline passed while fingerprinting the tools' input schemas"
	if reason == probe.ReasonCanceled {
		failed.Error = "canceled while fingerprinting the tools' input schemas"
	}
	failed.Tools = []probe.Tool{}
	return &failed
}

func onStart(req Request) (done func()) {
	if req.OnStart == nil {
		return func() {}
	}
	return req.OnStart()
}

// failed is the Result of a probe that never reached the server.
func failed(b launch.Built, reason probe.Reason, msg string, started time.Time) *probe.Result {
	took := time.Since(started)
	return &probe.Result{
		Reason:    reason,
		Error:     msg,
		Transport: b.Transport,
		Tools:     []probe.Tool{},
		Started:   started,
		Timings:   probe.Timings{Total: took},
		Duration:  took.Seconds(),
	}
}

package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// stdioTarget starts the test binary as a probetest server with cfg, with
// extra variables in its environment.
func stdioTarget(cfg probetest.Config, env map[string]string) probe.Target {
	path, args, own := probetest.Command(cfg)
	maps.Copy(own, env)
	return probe.Target{Command: path, Args: args, Env: own}
}

func runProbe(t *testing.T, target probe.Target, timeout time.Duration, opts probe.Options) *probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := probe.Run(ctx, target, opts)
	if res == nil {
		t.Fatal("Run returned nil")
	}
	if res.OK == (res.Reason != "") {
		t.Fatalf("OK %v with reason %q", res.OK, res.Reason)
	}
	if strings.Contains(res.Error, "\n") {
		t.Errorf("error is not one line: %q", res.Error)
	}
	return res
}

// sentMethods are the methods of the requests and notifications a probe
// sent, from its transcript.
func sentMethods(res *probe.Result) []string {
	var methods []string
	for _, e := range res.Transcript {
		var m struct {
			Method string `json:"method"`
		}
		if e.Direction == "send" && json.Unmarshal(e.Message, &m) == nil && m.Method != "" {
			methods = append(methods, m.Method)
		}
	}
	return methods
}

func TestStdioBehaviors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        probetest.Config
		env        map[string]string
		reason     probe.Reason
		tools      []string // nil: not checked
		toolCount  int      // checked when tools is nil and OK
		pages      int
		warning    string // a warning that must be there
		stderr     string // in the stderr tail
		errorHas   string
		listChange bool
	}{
		{name: "healthy", cfg: probetest.Config{}, tools: []string{"fetch_daily_report", "list_report_dates"}, pages: 1},
		{name: "token-gated with the token", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: "t0k"},
			env: map[string]string{"REPORT_API_TOKEN": "t0k"}, tools: []string{"fetch_daily_report", "list_report_dates"}, pages: 1},
		{name: "token-gated without the token lists nothing, and succeeds", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: "t0k"},
			tools: []string{}, pages: 1},
		{name: "scoped to read", cfg: probetest.Config{Behavior: probetest.Scoped},
			env: map[string]string{probetest.ScopeEnv: "read", "REPORT_API_TOKEN": "x"}, tools: []string{"list_report_dates"}, pages: 1},
		{name: "1000 tools in 10 pages", cfg: probetest.Config{Behavior: probetest.ManyTools}, toolCount: probetest.ManyToolsCount, pages: 10},
		{name: "cursor that never advances", cfg: probetest.Config{Behavior: probetest.StuckCursor}, reason: probe.ReasonPagination, errorHas: "again"},
		{name: "exits at once", cfg: probetest.Config{Behavior: probetest.ExitAtOnce}, reason: probe.ReasonExited,
			errorHas: "exit status 1", stderr: "fatal: REPORT_API_TOKEN is not set"},
		{name: "50 MiB line", cfg: probetest.Config{Behavior: probetest.HugeLine}, reason: probe.ReasonTooLarge},
		{name: "banner before the first message", cfg: probetest.Config{Behavior: probetest.Banner},
			tools: []string{"fetch_daily_report", "list_report_dates"}, warning: "report-server 1.0.0 ready"},
		{name: "wrong id", cfg: probetest.Config{Behavior: probetest.WrongID}, reason: probe.ReasonProtocol, errorHas: "tools/list"},
		{name: "ping before the answer", cfg: probetest.Config{Behavior: probetest.PingFirst}, tools: []string{"fetch_daily_report", "list_report_dates"}},
		{name: "list_changed notification", cfg: probetest.Config{Behavior: probetest.ListChanged},
			tools: []string{"fetch_daily_report", "list_report_dates"}, listChange: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A bound only: none of these servers is slow on purpose,
			// but a -race server writing 50 MiB on a loaded machine is.
			res := runProbe(t, stdioTarget(tc.cfg, tc.env), time.Minute, probe.Options{})
			if res.Reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", res.Reason, res.Error, tc.reason)
			}
			if res.Transport != probe.TransportStdio {
				t.Errorf("transport %q", res.Transport)
			}
			if tc.tools != nil && !slices.Equal(res.ToolNames(), tc.tools) {
				t.Errorf("tools %q, want %q", res.ToolNames(), tc.tools)
			}
			if tc.tools == nil && res.OK && len(res.Tools) != tc.toolCount {
				t.Errorf("%d tools, want %d", len(res.Tools), tc.toolCount)
			}
			if tc.pages != 0 && res.Pages != tc.pages {
				t.Errorf("%d pages, want %d", res.Pages, tc.pages)
			}
			if res.OK && len(res.Timings.Pages) != res.Pages {
				t.Errorf("%d page timings for %d pages", len(res.Timings.Pages), res.Pages)
			}
			if tc.warning != "" && !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, tc.warning) }) {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.warning)
			}
			if !strings.Contains(res.StderrTail, tc.stderr) {
				t.Errorf("stderr tail %q lacks %q", res.StderrTail, tc.stderr)
			}
			if !strings.Contains(res.Error, tc.errorHas) {
				t.Errorf("error %q lacks %q", res.Error, tc.errorHas)
			}
			if tc.listChange != (res.ListChanged > 0) {
				t.Errorf("%d list_changed notifications counted", res.ListChanged)
			}
			// A change announced during the probe makes it read the list
			// once more, in the same session; a server that declares
			// listChanged is one a listener can hear.
			if res.OK && (tc.listChange != res.Relisted || tc.listChange != res.AnnouncesChanges) {
				t.Errorf("relisted %v, announces changes %v; want both %v", res.Relisted, res.AnnouncesChanges, tc.listChange)
			}
			if !res.OK && len(res.Tools) != 0 {
				t.Errorf("a failed probe reports %d tools", len(res.Tools))
			}
			if res.Timings.Total <= 0 || res.Duration != res.Timings.Total.Seconds() {
				t.Errorf("total %s, duration %v", res.Timings.Total, res.Duration)
			}
		})
	}
}

func TestStdioEras(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		serverEra  probetest.Era
		pin        probe.Era
		era        probe.Era
		version    string
		initialize bool // whether initialize must have been sent
		discover   bool // whether server/discover must have been sent
		reason     probe.Reason
	}{
		{"modern-only, detected", probetest.EraModern, probe.EraAuto, probe.EraModern, probe.VersionModern, false, true, ""},
		{"legacy-only, detected", probetest.EraLegacy, probe.EraAuto, probe.EraLegacy, "2025-11-25", true, true, ""},
		{"dual, detected as modern", probetest.EraDual, "", probe.EraModern, probe.VersionModern, false, true, ""},
		{"dual, pinned legacy", probetest.EraDual, probe.EraLegacy, probe.EraLegacy, "2025-11-25", true, false, ""},
		{"modern-only, pinned modern", probetest.EraModern, probe.EraModern, probe.EraModern, probe.VersionModern, false, false, ""},
		// The kit's legacy server, like some real ones, lists tools without
		// a handshake: a pin is obeyed, not second-guessed.
		{"legacy-only, pinned modern", probetest.EraLegacy, probe.EraModern, probe.EraModern, probe.VersionModern, false, false, ""},
		{"modern-only, pinned legacy", probetest.EraModern, probe.EraLegacy, probe.EraLegacy, "", true, false, probe.ReasonRPCError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := stdioTarget(probetest.Config{Era: tc.serverEra}, nil)
			target.Era = tc.pin
			// Each server answers server/discover, or is not asked: a
			// sub-deadline no slow start on a loaded machine outlasts
			// keeps one from being taken for a silent legacy server.
			res := runProbe(t, target, time.Minute, probe.Options{Transcript: true, DiscoverTimeout: time.Minute})
			if res.Reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", res.Reason, res.Error, tc.reason)
			}
			if res.Era != tc.era || res.ProtocolVersion != tc.version {
				t.Errorf("era %q version %q, want %q %q", res.Era, res.ProtocolVersion, tc.era, tc.version)
			}
			sent := sentMethods(res)
			if slices.Contains(sent, "initialize") != tc.initialize || slices.Contains(sent, "server/discover") != tc.discover {
				t.Errorf("sent %q; want initialize %v, server/discover %v", sent, tc.initialize, tc.discover)
			}
			if tc.reason == "" && len(res.Tools) != 2 {
				t.Errorf("tools %q", res.ToolNames())
			}
			if tc.reason == "" && tc.serverEra != probetest.EraLegacy && res.ServerName != "probetest" {
				t.Errorf("server name %q", res.ServerName)
			}
			if tc.era == probe.EraModern && tc.serverEra != probetest.EraLegacy && tc.reason == "" && res.TTLMillis == nil {
				t.Errorf("modern result without ttlMs")
			}
			if tc.initialize && tc.reason == "" {
				i := slices.Index(sent, "initialize")
				if i+2 >= len(sent) || sent[i+1] != "notifications/initialized" || sent[i+2] != "tools/list" {
					t.Errorf("legacy order: sent %q", sent)
				}
			}
		})
	}
}

// spawns counts the server processes a probe started, from the kit's spawn
// log.
func spawns(t *testing.T, log string) int {
	t.Helper()
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("spawn log: %v", err)
	}
	return strings.Count(string(raw), "\n")
}

// Era detection costs no second process: a legacy server that answered
// server/discover with an error, or kept silent past its sub-deadline, or
// was slow to start, gets initialize in the same process. Only one that
// ended on the unknown first request is started again.
func TestStdioEraDetectionProcesses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     probetest.Config
		opts    probe.Options
		slow    slowness
		spawns  int
		warning string
		sent    []string // default: discover, then the legacy handshake
	}{
		{name: "legacy, answers -32601", cfg: probetest.Config{Era: probetest.EraLegacy}, spawns: 1},
		{name: "legacy, never answers unknown methods", cfg: probetest.Config{Behavior: probetest.SilentOnUnknown},
			opts: probe.Options{DiscoverTimeout: 200 * time.Millisecond}, spawns: 1},
		// The discover sub-deadline (half of what remains of the deadline,
		// at most the default 3 s) passes before the server reads anything;
		// it must not cost the server its life.
		{name: "legacy, slow to start past the discover sub-deadline", slow: slowPastBudget, spawns: 1},
		// Taken for legacy after the sub-deadline, it refuses initialize,
		// and is asked again.
		{name: "modern, slow to start", cfg: probetest.Config{Era: probetest.EraModern}, slow: slowPastTimeout, spawns: 1,
			sent: []string{"server/discover", "initialize", "server/discover", "tools/list"}},
		// Its exit ends server/discover, however slow it is to start: a
		// sub-deadline passing first (the default 3 s, on a loaded machine)
		// would send initialize to the process about to exit.
		{name: "legacy, exits on an unknown first request", cfg: probetest.Config{Behavior: probetest.ExitOnUnknownFirst},
			opts: probe.Options{DiscoverTimeout: time.Minute}, spawns: 2, warning: "ends on an unknown first request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			attempts := 0
			run := func(cfg probetest.Config, opts probe.Options, deadline time.Duration) (*probe.Result, string) {
				attempts++
				cfg.SpawnLog = filepath.Join(dir, "spawns-"+strconv.Itoa(attempts))
				opts.Transcript = true
				return runProbe(t, stdioTarget(cfg, nil), deadline, opts), cfg.SpawnLog
			}
			var res *probe.Result
			var spawnLog string
			switch tc.slow {
			case slowPastBudget:
				// The server starts reading at 3/4 of the deadline (past
				// its half, the sub-deadline of a 2 s probe), or a second
				// after the default sub-deadline for a longer one: the
				// handshake has the rest. On a loaded machine that can be
				// too little, and the deadline is doubled until it is
				// enough.
				last, up := probetest.UpWithin(2*time.Second, func(deadline time.Duration) bool {
					cfg := tc.cfg
					cfg.StartDelayMS = int(min(deadline*3/4, probe.DefaultDiscoverTimeout+time.Second).Milliseconds())
					res, spawnLog = run(cfg, tc.opts, deadline)
					if res.Reason == probe.ReasonTimeout {
						t.Logf("%s: after a start of %d ms, the %s deadline was too short for the handshake", res.Error, cfg.StartDelayMS, deadline)
						return false
					}
					return true
				})
				if !up {
					t.Fatalf("the handshake did not fit in even a %s deadline", last)
				}
			case slowPastTimeout:
				// The server reads nothing for three discover sub-deadlines,
				// so the first passes; the second server/discover, asked
				// once initialize is refused, has a whole sub-deadline for
				// a server that is up: on a loaded machine that can be too
				// little, and the sub-deadline is doubled (with the delay)
				// until it is enough.
				last, up := probetest.UpWithin(100*time.Millisecond, func(sub time.Duration) bool {
					cfg, opts := tc.cfg, tc.opts
					cfg.StartDelayMS = int(3 * sub.Milliseconds())
					opts.DiscoverTimeout = sub
					res, spawnLog = run(cfg, opts, time.Minute)
					if res.Reason == probe.ReasonRPCError && strings.HasPrefix(res.Error, "initialize:") {
						t.Logf("%s: the server, up, did not answer server/discover again within %s", res.Error, sub)
						return false
					}
					return true
				})
				if !up {
					t.Fatalf("initialize was refused and server/discover not answered again even within %s", last)
				}
			default:
				res, spawnLog = run(tc.cfg, tc.opts, time.Minute)
			}
			if !res.OK {
				t.Fatalf("%s: %s (stderr %q)", res.Reason, res.Error, res.StderrTail)
			}
			if got := spawns(t, spawnLog); got != tc.spawns {
				t.Errorf("%d processes started, want %d", got, tc.spawns)
			}
			want := []string{"server/discover", "initialize", "notifications/initialized", "tools/list"}
			if tc.sent != nil {
				want = tc.sent
			}
			if sent := sentMethods(res); !slices.Equal(sent, want) {
				t.Errorf("sent %q, want %q", sent, want)
			}
			hasWarning := slices.ContainsFunc(res.Warnings, func(w string) bool { return tc.warning != "" && strings.Contains(w, tc.warning) })
			if hasWarning != (tc.warning != "") {
				t.Errorf("warnings %q, want one containing %q", res.Warnings, tc.warning)
			}
		})
	}
}

// slowness is how a server of TestStdioEraDetectionProcesses is slow to
// start.
type slowness int

const (
	slowPastBudget  slowness = iota + 1 // reads nothing until past the discover sub-deadline the probe's deadline makes
	slowPastTimeout                     // reads nothing for 3 times Options.DiscoverTimeout
)

// A server that cannot start (it exits before reading anything, saying why
// on stderr) is started once and reported exited with its stderr, whether
// the era is detected, remembered or slow to be told: its exit says nothing
// about the era, and a second start would only crash again (and, on a
// loaded machine, run the probe into its deadline).
func TestStdioCrashAtStartStartsOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  probetest.Config
		hint probe.Era
		opts probe.Options
	}{
		{name: "era detected", cfg: probetest.Config{Behavior: probetest.ExitAtOnce}},
		// The discover sub-deadline passes while the server still starts
		// (a loaded machine): it exits during initialize.
		{name: "exits after the discover sub-deadline", cfg: probetest.Config{Behavior: probetest.ExitAtOnce, StartDelayMS: 400},
			opts: probe.Options{DiscoverTimeout: 50 * time.Millisecond}},
		{name: "legacy era remembered", cfg: probetest.Config{Behavior: probetest.ExitAtOnce}, hint: probe.EraLegacy},
		{name: "modern era remembered", cfg: probetest.Config{Behavior: probetest.ExitAtOnce}, hint: probe.EraModern},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.SpawnLog = filepath.Join(t.TempDir(), "spawns")
			target := stdioTarget(cfg, nil)
			target.EraHint = tc.hint
			res := runProbe(t, target, 20*time.Second, tc.opts)
			if res.Reason != probe.ReasonExited {
				t.Fatalf("reason %q (%s), want exited", res.Reason, res.Error)
			}
			if !strings.Contains(res.Error, "before reading any request") {
				t.Errorf("error %q does not say the server read nothing", res.Error)
			}
			if res.StderrTail != "fatal: REPORT_API_TOKEN is not set\n" {
				t.Errorf("stderr tail %q, want the one line of one start", res.StderrTail)
			}
			if got := spawns(t, cfg.SpawnLog); got != 1 {
				t.Errorf("%d processes started, want 1", got)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("warnings %q: nothing about the era is to be said of a server that did not start", res.Warnings)
			}
		})
	}
}

// A server that exits on an unknown first request is fine when its era is
// known: initialize goes first, in the one process.
func TestStdioExitOnUnknownFirstPinnedLegacy(t *testing.T) {
	t.Parallel()
	cfg := probetest.Config{Behavior: probetest.ExitOnUnknownFirst, SpawnLog: filepath.Join(t.TempDir(), "spawns")}
	target := stdioTarget(cfg, nil)
	target.EraHint = probe.EraLegacy
	res := runProbe(t, target, 20*time.Second, probe.Options{})
	if !res.OK || res.Era != probe.EraLegacy {
		t.Fatalf("ok %v era %q: %s: %s", res.OK, res.Era, res.Reason, res.Error)
	}
	if got := spawns(t, cfg.SpawnLog); got != 1 {
		t.Errorf("%d processes started, want 1", got)
	}
}

// An era hint is followed without server/discover, and a wrong one is
// detected afresh within the same probe: the result is the server's, with a
// warning, never a failure of the hint's making.
func TestStdioEraHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		serverEra probetest.Era
		hint      probe.Era
		era       probe.Era
		sent      []string
		wrong     bool
	}{
		{"legacy hint, legacy server", probetest.EraLegacy, probe.EraLegacy, probe.EraLegacy,
			[]string{"initialize", "notifications/initialized", "tools/list"}, false},
		{"modern hint, modern server", probetest.EraModern, probe.EraModern, probe.EraModern,
			[]string{"tools/list"}, false},
		{"modern hint, legacy server", probetest.EraLegacy, probe.EraModern, probe.EraLegacy,
			[]string{"tools/list", "server/discover", "initialize", "notifications/initialized", "tools/list"}, true},
		{"legacy hint, modern server", probetest.EraModern, probe.EraLegacy, probe.EraModern,
			[]string{"initialize", "server/discover", "tools/list"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := stdioTarget(probetest.Config{Era: tc.serverEra}, nil)
			target.EraHint = tc.hint
			// Each server answers server/discover, or is not asked: a
			// sub-deadline no slow start on a loaded machine outlasts
			// keeps one from being taken for a silent legacy server.
			res := runProbe(t, target, time.Minute, probe.Options{Transcript: true, DiscoverTimeout: time.Minute})
			if !res.OK || res.Era != tc.era {
				t.Fatalf("ok %v era %q, want era %q: %s: %s", res.OK, res.Era, tc.era, res.Reason, res.Error)
			}
			if sent := sentMethods(res); !slices.Equal(sent, tc.sent) {
				t.Errorf("sent %q, want %q", sent, tc.sent)
			}
			if len(res.Tools) != 2 || res.Pages != 1 || len(res.Timings.Pages) != 1 {
				t.Errorf("%d tools, %d pages, %d page timings: the first attempt's count", len(res.Tools), res.Pages, len(res.Timings.Pages))
			}
			wrong := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "no longer speaks the "+string(tc.hint)) })
			if wrong != tc.wrong {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

// The deadline holds whatever the server does: a 2 s probe returns with
// reason timeout, not before 2 s (timers never fire early) and by the
// generous bound of probe.ReturnedBy (these servers never answer, or take
// minutes to, so that bound only tells "enforced" from "not enforced").
// Each case needs the server to get somewhere before the deadline (the
// grandchild started, tools/list asked): on a loaded machine, where a -race
// test server can take longer than 2 s just to start, the deadline is
// doubled until it does (probetest.UpWithin), each deadline held.
//
// Not parallel with the other tests: on a loaded 2-core machine, killing a
// -race test server can take a few hundred milliseconds by itself.
func TestStdioDeadline(t *testing.T) {
	tests := []struct {
		name     string
		behavior probetest.Behavior
		pin      probe.Era
		stalled  string // the step the probe is to be stuck in at the deadline
	}{
		{"stalls on tools/list", probetest.StallToolsList, "", "tools/list"},
		{"never answers, auto era", probetest.Unresponsive, "", "initialize"},
		{"never answers, legacy pinned", probetest.Unresponsive, probe.EraLegacy, "initialize"},
		{"drips its answers a byte at a time", probetest.SlowBody, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			last, up := probetest.UpWithin(2*time.Second, func(deadline time.Duration) bool {
				pidFile := filepath.Join(dir, "grandchild-"+deadline.String()+".pid")
				target := stdioTarget(probetest.Config{Behavior: tc.behavior, PIDFile: pidFile}, nil)
				target.Era = tc.pin
				start := time.Now()
				res := runProbe(t, target, deadline, probe.Options{})
				elapsed := time.Since(start)
				if res.Reason != probe.ReasonTimeout {
					t.Fatalf("reason %q (%s), want timeout", res.Reason, res.Error)
				}
				if elapsed < deadline || elapsed > probe.ReturnedBy(deadline) {
					t.Errorf("returned after %s, want at the %s deadline", elapsed, deadline)
				}
				if tc.stalled != "" && !strings.HasPrefix(res.Error, tc.stalled+":") {
					t.Logf("at the %s deadline the probe was not yet in %s (%s): the server was slow to start", deadline, tc.stalled, res.Error)
					return false
				}
				if tc.behavior != probetest.Unresponsive {
					return true
				}
				pid, ok := grandchildPID(t, pidFile)
				if !ok {
					t.Logf("the server had not started its grandchild by the %s deadline", deadline)
					return false
				}
				assertGone(t, pid)
				return true
			})
			if !up {
				t.Fatalf("the server did not get where the test needs it even with a %s deadline", last)
			}
		})
	}
}

// grandchildPID reads the pid the Unresponsive server's grandchild wrote,
// and says whether it wrote one.
func grandchildPID(t *testing.T, pidFile string) (int, bool) {
	t.Helper()
	raw, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("the grandchild's pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file holds %q", raw)
	}
	return pid, true
}

// assertGone checks that the grandchild process pid is dead: gone, or a
// zombie. The grandchild was orphaned, so init reaps it, on its own
// schedule (some container inits only every few seconds); a zombie runs
// nothing and holds nothing.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); err == nil && processState(pid) != "Z" {
		t.Errorf("grandchild %d is still alive after the probe (state %q)", pid, processState(pid))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A probe canceled while the server runs ends with reason canceled, and
// kills the server's group. The cancel comes once the server's grandchild
// has written its pid, so it falls in the probe, not before it started.
func TestStdioCanceled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for i := 0; i < 2000; i++ { // 20 s: only a server that never started gets there
			if _, err := os.Stat(pidFile); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res := probe.Run(ctx, stdioTarget(probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile}, nil), probe.Options{})
	if res.Reason != probe.ReasonCanceled {
		t.Fatalf("reason %q (%s), want canceled", res.Reason, res.Error)
	}
	pid, ok := grandchildPID(t, pidFile)
	if !ok {
		t.Fatal("the grandchild wrote no pid")
	}
	assertGone(t, pid)
}

// A line past the cap fails as soon as the cap is passed, not after
// reading it: this server's line never ends (it sends 2 MiB of it and
// sleeps), so a probe that waited for the end would run into its deadline
// and report a timeout.
func TestStdioHugeLineIsFast(t *testing.T) {
	t.Parallel()
	script := `read -r line
printf '{"jsonrpc":"2.0","id":1,"result":{"pad":"'
head -c 2097152 /dev/zero | tr '\0' x
exec sleep 120`
	target := probe.Target{Command: "/bin/sh", Args: []string{"-c", script}, Era: probe.EraLegacy}
	res := runProbe(t, target, time.Minute, probe.Options{MaxMessageBytes: 1 << 20, Transcript: true})
	if res.Reason != probe.ReasonTooLarge {
		t.Fatalf("reason %q (%s), want too_large", res.Reason, res.Error)
	}
	if !strings.Contains(res.Error, "1048576") {
		t.Errorf("error %q does not name the cap", res.Error)
	}
}

func TestStdioSpawnFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target probe.Target
		has    string
	}{
		{"no such command", probe.Target{Command: "mcpwatch-no-such-server"}, `"mcpwatch-no-such-server"`},
		{"no such directory", probe.Target{Command: "/bin/sh", Dir: "/nonexistent/dir"}, "working directory /nonexistent/dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runProbe(t, tc.target, 5*time.Second, probe.Options{})
			if res.Reason != probe.ReasonSpawnFailed || !strings.Contains(res.Error, tc.has) {
				t.Errorf("reason %q error %q, want spawn_failed naming %s", res.Reason, res.Error, tc.has)
			}
		})
	}
}

// A stdio server sees the minimal environment plus its own variables, not
// mcpwatch's other variables, unless it inherits everything.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("MCPWATCH_TEST_TOKEN", "from-mcpwatch")
	cfg := probetest.Config{Behavior: probetest.TokenGated, Token: "from-mcpwatch", TokenEnv: "MCPWATCH_TEST_TOKEN"}
	tests := []struct {
		name    string
		inherit bool
		env     map[string]string
		tools   int
	}{
		{"not inherited", false, nil, 0},
		{"inherited", true, nil, 2},
		{"own variable", false, map[string]string{"MCPWATCH_TEST_TOKEN": "from-mcpwatch"}, 2},
		{"own variable wins over inherited", true, map[string]string{"MCPWATCH_TEST_TOKEN": "other"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := stdioTarget(cfg, tc.env)
			target.InheritEnv = tc.inherit
			res := runProbe(t, target, 20*time.Second, probe.Options{})
			if !res.OK || len(res.Tools) != tc.tools {
				t.Errorf("ok %v (%s), %d tools, want %d", res.OK, res.Error, len(res.Tools), tc.tools)
			}
		})
	}
}

// Dir and the stderr tail's bound, with a plain shell as the server.
func TestStdioDirAndStderrTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `pwd >&2; i=0; while [ $i -lt 2000 ]; do echo "noise line $i" >&2; i=$((i+1)); done; echo "last words" >&2; exit 7`
	res := runProbe(t, probe.Target{Command: "/bin/sh", Args: []string{"-c", script}, Dir: dir, Era: probe.EraLegacy},
		10*time.Second, probe.Options{StderrTailBytes: 256})
	if res.Reason != probe.ReasonExited || !strings.Contains(res.Error, "exit status 7") {
		t.Fatalf("reason %q error %q, want exited with status 7", res.Reason, res.Error)
	}
	if len(res.StderrTail) > 256 || !strings.HasSuffix(res.StderrTail, "last words\n") {
		t.Errorf("stderr tail (%d bytes) %q", len(res.StderrTail), res.StderrTail)
	}

	res = runProbe(t, probe.Target{Command: "/bin/sh", Args: []string{"-c", "pwd >&2; exit 1"}, Dir: dir, Era: probe.EraLegacy},
		10*time.Second, probe.Options{})
	if strings.TrimSpace(res.StderrTail) != dir {
		t.Errorf("server ran in %q, want %q", res.StderrTail, dir)
	}
}

func TestStdioTranscript(t *testing.T) {
	t.Parallel()
	target := stdioTarget(probetest.Config{Era: probetest.EraModern}, nil)
	res := runProbe(t, target, 20*time.Second, probe.Options{Transcript: true})
	if !res.OK {
		t.Fatalf("%s: %s", res.Reason, res.Error)
	}
	if got := sentMethods(res); !slices.Equal(got, []string{"server/discover", "tools/list"}) {
		t.Errorf("sent %q", got)
	}
	var recv int
	for _, e := range res.Transcript {
		if e.Direction == "recv" {
			recv++
		}
	}
	if recv != 2 {
		t.Errorf("%d messages received in the transcript, want 2", recv)
	}
	// Every modern request carries _meta with the version and capabilities.
	for _, e := range res.Transcript {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if e.Direction != "send" || json.Unmarshal(e.Message, &m) != nil {
			continue
		}
		if string(m.Params.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || m.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
			t.Errorf("%s sent without the modern _meta: %s", m.Method, e.Message)
		}
	}
	if res2 := runProbe(t, target, 20*time.Second, probe.Options{}); len(res2.Transcript) != 0 {
		t.Errorf("transcript kept without being asked for")
	}
}

func TestTargetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target probe.Target
		error  string
	}{
		{"nothing", probe.Target{}, "a target needs a command or a URL"},
		{"both", probe.Target{Command: "x", URL: "http://127.0.0.1:1/"}, "a target has either a command or a URL, not both"},
		{"command with an HTTP transport", probe.Target{Command: "x", Transport: probe.TransportHTTP}, `command "x": transport "http" is for URLs`},
		{"unknown era", probe.Target{Command: "x", Era: "future"}, `unknown era "future"`},
		{"unknown transport", probe.Target{URL: "http://127.0.0.1:1/", Transport: "carrier-pigeon"},
			`unknown transport "carrier-pigeon" for a URL (want auto, http or sse)`},
		{"URL with the stdio transport", probe.Target{URL: "http://127.0.0.1:1/", Transport: probe.TransportStdio},
			`unknown transport "stdio" for a URL (want auto, http or sse)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runProbe(t, tc.target, 5*time.Second, probe.Options{})
			if res.Reason != probe.ReasonConfig || !strings.Contains(res.Error, tc.error) {
				t.Errorf("reason %q (%s), want config: %s", res.Reason, res.Error, tc.error)
			}
		})
	}
}

// processState is the state letter of /proc/PID/stat ("" when gone).
func processState(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	_, rest, _ := strings.Cut(string(stat[bytes.LastIndexByte(stat, ')')+1:]), " ")
	state, _, _ := strings.Cut(rest, " ")
	return state
}

// A context that has already ended starts nothing.
func TestRunWithEndedContext(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	tests := []struct {
		name   string
		ctx    context.Context
		reason probe.Reason
	}{
		{"canceled", canceled, probe.ReasonCanceled},
		{"expired", expired, probe.ReasonTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
			res := probe.Run(tc.ctx, stdioTarget(probetest.Config{Behavior: probetest.Unresponsive, PIDFile: pidFile}, nil), probe.Options{})
			if res.Reason != tc.reason || !strings.Contains(res.Error, "not started") {
				t.Errorf("reason %q error %q, want %s", res.Reason, res.Error, tc.reason)
			}
			if _, err := os.Stat(pidFile); err == nil {
				t.Errorf("a server was started")
			}
		})
	}
}

// A server request is answered in the legacy era (ping gets {}), never in
// the modern one, where servers send no requests and clients no responses.
func TestStdioServerRequestsByEra(t *testing.T) {
	t.Parallel()
	modern := `read -r line
echo '{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"complete"}}'
read -r line
echo '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}'
echo '{"jsonrpc":"2.0","id":2,"result":{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"public"}}'
read -r line`
	legacy := `read -r line
echo '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}'
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh"}}}'
read -r pong
read -r initialized
read -r list
echo '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'
read -r line`
	tests := []struct {
		name     string
		script   string
		era      probe.Era
		answered bool
	}{
		{"modern", modern, probe.EraAuto, false},
		{"legacy, during initialize", legacy, probe.EraLegacy, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := probe.Target{Command: "/bin/sh", Args: []string{"-c", tc.script}, Era: tc.era}
			res := runProbe(t, target, 10*time.Second, probe.Options{Transcript: true})
			if !res.OK {
				t.Fatalf("%s: %s", res.Reason, res.Error)
			}
			var replies []string
			for _, e := range res.Transcript {
				if e.Direction == "send" && strings.Contains(string(e.Message), `"srv-1"`) {
					replies = append(replies, string(e.Message))
				}
			}
			if tc.answered != (len(replies) == 1 && replies[0] == `{"jsonrpc":"2.0","id":"srv-1","result":{}}`) {
				t.Errorf("replies to the server's ping: %q", replies)
			}
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "ping") })
			if warned == tc.answered {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

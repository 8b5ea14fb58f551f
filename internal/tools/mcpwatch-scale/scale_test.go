package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// End to end: the harness against the real mcpwatch and test server,
// built here, on a fleet small and fast enough for a test.

func buildBinaries(t *testing.T) (mcpwatch, testserver string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds mcpwatch and runs it for seconds")
	}
	dir := t.TempDir()
	for name, pkg := range map[string]string{"mcpwatch": "../../../cmd/mcpwatch", "mcpwatch-testserver": "../mcpwatch-testserver"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "mcpwatch"), filepath.Join(dir, "mcpwatch-testserver")
}

// The window's figures depend on how much of the machine mcpwatch gets: on
// a loaded one, probing 40 servers every 300 ms for 900 ms can leave a
// server unprobed in the window, or time out a healthy one. Those figures
// (shortfalls) are checked at the base schedule and, when short, again with
// every period and deadline doubled (probetest.UpWithin), until the machine
// keeps up; the rest must hold at every schedule.
func TestScaleRuns(t *testing.T) {
	mcpwatch, testserver := buildBinaries(t)
	base := scaleOptions{
		interval: 300 * time.Millisecond, duration: 900 * time.Millisecond, timeout: 2 * time.Second,
		concurrency: 8, listeners: 2, seed: 1, scrapes: 2, promInterval: 400 * time.Millisecond,
		mcpwatch: mcpwatch, testserver: testserver, out: io.Discard,
	}
	// untilKeptUp runs o at base's schedule, then slower, until check finds
	// no shortfall.
	untilKeptUp := func(t *testing.T, o scaleOptions, check func(r *result) (shortfalls []string)) {
		t.Helper()
		last, up := probetest.UpWithin(o.interval, func(interval time.Duration) bool {
			slow := o.slowedBy(int(interval / o.interval))
			r, err := runScale(context.Background(), slow)
			if err != nil {
				t.Fatal(err)
			}
			if short := check(r); len(short) > 0 {
				t.Logf("probing every %s, the machine did not keep up: %s", interval, strings.Join(short, "; "))
				return false
			}
			return true
		})
		if !up {
			t.Fatalf("the machine did not keep up even probing every %s", last)
		}
	}

	t.Run("http", func(t *testing.T) {
		o := base
		o.label, o.mode, o.n, o.failShare, o.slowShare = "http-test", "http", 40, 0.1, 0.05
		o.pprofDir = t.TempDir()
		untilKeptUp(t, o, func(r *result) (short []string) {
			if r.Rounds != 3 {
				t.Errorf("%d rounds, want 3", r.Rounds)
			}
			if r.CPUS <= 0 || r.RSSPeakMB <= 0 {
				t.Errorf("implausible figures: %+v", r)
			}
			if r.Scrapes != 2 || r.ScrapeBytes == 0 {
				t.Errorf("scrapes: %d at 1/s (%d bytes); want 2, >0", r.Scrapes, r.ScrapeBytes)
			}
			for _, name := range []string{"http-test.cpu.pb.gz", "http-test.heap.pb.gz"} {
				if fi, err := os.Stat(filepath.Join(o.pprofDir, name)); err != nil || fi.Size() == 0 {
					t.Errorf("profile %s not saved: %v", name, err)
				}
			}
			if r.Probes < 40 || r.PerServerMin < 1 || math.IsNaN(r.LagP50S) {
				short = append(short, fmt.Sprintf("%v probes, at least %d per server, lag p50 %v: want at least one probe per server", r.Probes, r.PerServerMin, r.LagP50S))
			}
			// 4 of 40 servers fail by design: every one of their probes.
			if r.FailedShare < 0.05 || r.FailedShare > 0.2 {
				short = append(short, fmt.Sprintf("failed share %.3f, want about 0.1", r.FailedShare))
			}
			if r.PromScrapes < 2 {
				short = append(short, fmt.Sprintf("%d scrapes in the window, want 2 or more", r.PromScrapes))
			}
			return short
		})
	})

	// The floor: the requests mcpwatch sent in one interval, replayed by
	// a minimal client over the same window, every one answered.
	t.Run("http floor", func(t *testing.T) {
		o := base
		o.label, o.mode, o.n, o.failShare, o.floor = "http-floor", "http", 20, 0.1, true
		r, err := runScale(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if r.FloorBatches == 0 || r.FloorRequests < 2*r.FloorBatches || r.FloorErrors != 0 || r.FloorCPUS < 0 {
			t.Errorf("floor: %d servers' requests, %d requests, %d unanswered, %.3fs CPU: want some, at least two each, all answered",
				r.FloorBatches, r.FloorRequests, r.FloorErrors, r.FloorCPUS)
		}
	})

	// The HTTPS fleet, HTTP/1.1 and HTTP/2: mcpwatch and the floor trust
	// the run's test CA through SSL_CERT_FILE (a fleet they did not trust
	// would fail every probe), and the fleet counts their handshakes.
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("https floor h2=%v", h2), func(t *testing.T) {
			o := base
			o.label, o.mode, o.n, o.failShare, o.floor, o.tls, o.h2 = "https-floor", "http", 20, 0.1, true, true, h2
			r, err := runScale(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
			if r.TLS != want || r.HandshakesBefore == 0 {
				t.Errorf("tls %q, %d handshakes before the window: want %s, some", r.TLS, r.HandshakesBefore, want)
			}
			if r.Probes == 0 || r.FailedShare > 0.2 {
				t.Errorf("%v probes, %.2f failed: want the healthy servers' probes to pass over TLS", r.Probes, r.FailedShare)
			}
			if r.FloorBatches == 0 || r.FloorErrors != 0 {
				t.Errorf("floor: %d servers' requests, %d unanswered: want some, all answered", r.FloorBatches, r.FloorErrors)
			}
		})
	}

	// calls: auto: each server's read-only tool, chosen by mcpwatch from
	// its listing, called on the call schedule.
	t.Run("http auto calls", func(t *testing.T) {
		o := base
		o.label, o.mode, o.n = "http-auto", "http", 20
		o.calls = callSpec{auto: 1, interval: 300 * time.Millisecond}
		r, err := runScale(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if r.AutoCalls != 1 || r.CallsMade == 0 || r.CallsFailingShare != 0 {
			t.Errorf("auto calls %d, %d calls made, %.2f failing: want calls made, none failing", r.AutoCalls, r.CallsMade, r.CallsFailingShare)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		o := base
		o.label, o.mode, o.n, o.stdioConcurrency = "stdio-test", "stdio", 4, 2
		untilKeptUp(t, o, func(r *result) (short []string) {
			if r.MarkedAfterStop != 0 {
				t.Errorf("%d processes of the run left after mcpwatch stopped", r.MarkedAfterStop)
			}
			if r.Probes < 4 || r.PerServerMin < 1 {
				short = append(short, fmt.Sprintf("%v probes, at least %d per server: want a probe of every server", r.Probes, r.PerServerMin))
			}
			return short
		})
	})

	t.Run("check", func(t *testing.T) {
		for _, kind := range []string{"mcp.json", "mcpwatch.yml"} {
			c, err := runCheckTiming(context.Background(), mcpwatch, testserver, kind, "mixed", 50*time.Millisecond, 2, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.OneS) != 1 || len(c.ManyS) != 1 || c.Ratio <= 0 {
				t.Errorf("%s: %+v", kind, c)
			}
		}
	})
}

func TestPlanFleetShares(t *testing.T) {
	servers := planFleet(fleetSpec{n: 1000, listeners: 3, failShare: 0.05, slowShare: 0.05, seed: 7})
	var failing, slow, drifted int
	sets := map[int]bool{}
	for _, s := range servers {
		switch {
		case s.behavior != probetest.Healthy:
			failing++
		case s.delay > 0:
			slow++
			if s.delay < 50*time.Millisecond || s.delay >= 200*time.Millisecond {
				t.Errorf("%s: delay %s outside 50-200 ms", s.name, s.delay)
			}
		}
		if s.driftedLock {
			drifted++
		}
		sets[s.toolSet] = true
	}
	if failing != 50 || slow != 50 || drifted != 20 || len(sets) != toolSetCount {
		t.Errorf("%d failing, %d slow, %d drifted, %d tool sets; want 50, 50, 20, %d", failing, slow, drifted, len(sets), toolSetCount)
	}
	again := planFleet(fleetSpec{n: 1000, listeners: 3, failShare: 0.05, slowShare: 0.05, seed: 7})
	for i := range servers {
		if servers[i] != again[i] {
			t.Fatalf("server %d differs between two plans of one spec", i)
		}
	}
	fixed := planFleet(fleetSpec{n: 1000, listeners: 3, failShare: 0.05, slowShare: 0.05, slowDelay: 200 * time.Millisecond, seed: 7})
	slow = 0
	for _, s := range fixed {
		if s.delay > 0 {
			slow++
			if s.delay != 200*time.Millisecond {
				t.Errorf("%s: delay %s with -slow-delay 200ms", s.name, s.delay)
			}
		}
	}
	if slow != 50 {
		t.Errorf("%d slow with -slow-delay, want 50", slow)
	}
	if !strings.HasPrefix(servers[7].name, "s007") || serverName(7, 10000) != "s0007" {
		t.Errorf("names %q, %q: want zero-padded to the fleet's width", servers[7].name, serverName(7, 10000))
	}
}

// slowedBy is o with every period and deadline k times longer: the same
// number of rounds and scrapes in a window k times longer.
func (o scaleOptions) slowedBy(k int) scaleOptions {
	o.interval *= time.Duration(k)
	o.duration *= time.Duration(k)
	o.timeout *= time.Duration(k)
	o.promInterval *= time.Duration(k)
	return o
}

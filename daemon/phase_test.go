package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// fleetPlans plans n servers on one @every schedule.
func fleetPlans(t *testing.T, n int, spec string) []serverPlan {
	t.Helper()
	return replicaPlans(t, n, spec, placement{})
}

// replicaPlans plans n servers on one @every schedule as the replica pl.
func replicaPlans(t *testing.T, n int, spec string, pl placement) []serverPlan {
	t.Helper()
	cfg := &config.Config{Defaults: config.Defaults{Schedule: spec}}
	for i := range n {
		cfg.Servers = append(cfg.Servers, config.Server{Name: fmt.Sprintf("server-%04d", i), URL: "http://127.0.0.1:1/mcp"})
	}
	cfg.Normalize()
	plans, err := plan(cfg, pl)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// A first round squeezed into a few seconds must not repeat as a burst every
// interval: from the second probe on, servers on one interval are spread
// over all of it, and each keeps exactly its interval.
func TestSecondRoundSpreadsOverTheInterval(t *testing.T) {
	const (
		n        = 200
		interval = time.Minute
		buckets  = 10
		spread   = 5 * time.Second // the default first-round spread
	)
	plans := fleetPlans(t, n, "@every 1m")
	start := time.Date(2026, 3, 1, 10, 0, 0, 123, time.UTC)

	counts := make([]int, buckets)
	for _, p := range plans {
		first := firstDue(p.sched, start, spread)
		if first.Before(start) || !first.Before(start.Add(spread)) {
			t.Fatalf("%s: first probe due %s, not within the %s after start", p.cfg.Name, first.Sub(start), spread)
		}
		second := nextAfter(p.sched, first, first)
		if gap := second.Sub(first); gap <= interval/2 || gap > interval*3/2 {
			t.Errorf("%s: second probe %s after the first, want within (%s, %s]", p.cfg.Name, gap, interval/2, interval*3/2)
		}
		offset := second.Sub(start.Add(interval/2)) % interval // where in an interval it fell
		counts[offset*buckets/interval]++
		due := second
		for range 3 {
			next := nextAfter(p.sched, due, due)
			if got := next.Sub(due); got != interval {
				t.Fatalf("%s: due %s then %s: %s apart, want exactly %s", p.cfg.Name, due, next, got, interval)
			}
			due = next
		}
	}
	fair := n / buckets
	for i, c := range counts {
		if c > 3*fair {
			t.Errorf("%d of %d second-round probes fall in window %d of %d of the interval (fair share %d): %v",
				c, n, i, buckets, fair, counts)
		}
	}
}

// A server's phase depends on its name and interval only: a reload that
// keeps the interval keeps the grid, one that changes it moves to the new
// one, and the grid is aligned to the clock (the same instants whatever the
// time the daemon started).
func TestPhaseIsStableAcrossReloads(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 7, 0, time.UTC)
	a := fleetPlans(t, 3, "@every 10s")
	b := fleetPlans(t, 3, "@every 10s")
	for i := range a {
		if got, want := b[i].sched.Next(at), a[i].sched.Next(at); !got.Equal(want) {
			t.Errorf("%s: after a reload next = %s, before %s", a[i].cfg.Name, got, want)
		}
		p := a[i].sched.(phased)
		if off := a[i].sched.Next(at).UnixNano() % int64(10*time.Second); off != int64(p.phase) {
			t.Errorf("%s: due at offset %s in its interval, phase is %s", a[i].cfg.Name, time.Duration(off), p.phase)
		}
	}
	if a[0].sched.Next(at).Equal(a[1].sched.Next(at)) && a[1].sched.Next(at).Equal(a[2].sched.Next(at)) {
		t.Error("three servers of different names got the same phase")
	}
	c := fleetPlans(t, 1, "@every 7s")
	if p := c[0].sched.(phased); p.interval != 7*time.Second || p.phase >= p.interval {
		t.Errorf("phase %s for interval %s", p.phase, p.interval)
	}
}

// Cron expressions keep their own times.
func TestCronIsNotPhased(t *testing.T) {
	plans := fleetPlans(t, 2, "*/5 * * * *")
	at := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	for _, p := range plans {
		if got := p.sched.Next(at); !got.Equal(time.Date(2026, 3, 1, 10, 5, 0, 0, time.UTC)) {
			t.Errorf("%s: next = %s", p.cfg.Name, got)
		}
	}
}

// gridAfter is strictly after its argument, on the grid, also before 1970.
func TestGridAfter(t *testing.T) {
	p := phased{interval: 10 * time.Second, phase: 3 * time.Second}
	for _, tc := range []struct{ at, want int64 }{
		{0, 3}, {3, 13}, {4, 13}, {13, 23}, {-7, 3}, {-8, -7}, {-17, -7},
	} {
		got := p.gridAfter(time.Unix(tc.at, 0))
		if !got.Equal(time.Unix(tc.want, 0)) {
			t.Errorf("gridAfter(%d) = %d, want %d", tc.at, got.Unix(), tc.want)
		}
	}
	// A daemon that fell behind is back on the grid at once.
	due := time.Unix(13, 0)
	if got := nextAfter(p, due, time.Unix(58, 0)); !got.Equal(time.Unix(63, 0)) {
		t.Errorf("behind: next = %d, want 63", got.Unix())
	}
}

// probesAfter returns the times a server on schedule s is probed in
// [from, from+span), following the schedule from its grid time after from:
// the clock is the argument, never the wall clock.
func probesAfter(s schedule, from time.Time, span time.Duration) []time.Time {
	var out []time.Time
	due := s.(phased).gridAfter(from.Add(-1))
	for due.Before(from.Add(span)) {
		out = append(out, due)
		due = nextAfter(s, due, due)
	}
	return out
}

// detection is, for a change at each of steps instants spread evenly over
// one interval after from, the time until the next probe in probes: its
// mean and its worst case.
func detection(probes []time.Time, from time.Time, interval time.Duration, steps int) (mean, worst time.Duration) {
	var sum time.Duration
	for i := range steps {
		change := from.Add(interval * time.Duration(i) / time.Duration(steps))
		next := time.Duration(1<<63 - 1)
		for _, p := range probes {
			if !p.Before(change) && p.Sub(change) < next {
				next = p.Sub(change)
			}
		}
		sum += next
		worst = max(worst, next)
	}
	return sum / time.Duration(steps), worst
}

// Two replicas of a StatefulSet (mcpwatch-0 and mcpwatch-1) probe every
// server exactly half an interval apart, so together they see a change in
// half the time one replica does: the worst case drops from an interval to
// half of one, and the mean from a half to a quarter.
func TestReplicaPairHalvesDetectionLatency(t *testing.T) {
	const (
		n        = 100
		interval = 30 * time.Second
		steps    = 60
	)
	from := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	span := 3 * interval
	a := replicaPlans(t, n, "@every 30s", placement{replica: "mcpwatch-0"})
	b := replicaPlans(t, n, "@every 30s", placement{replica: "mcpwatch-1"})
	single := fleetPlans(t, n, "@every 30s")
	var oneMean, pairMean time.Duration
	for i := range a {
		name := a[i].cfg.Name
		pa, pb := a[i].sched.(phased).phase, b[i].sched.(phased).phase
		if d := (pb - pa + interval) % interval; d != interval/2 {
			t.Errorf("%s: replica 1's phase is %s after replica 0's, want exactly %s", name, d, interval/2)
		}
		if pa != single[i].sched.(phased).phase {
			t.Errorf("%s: replica 0's phase %s differs from the unnamed daemon's %s", name, pa, single[i].sched.(phased).phase)
		}
		probesA := probesAfter(a[i].sched, from, span)
		both := append(probesAfter(b[i].sched, from, span), probesA...)
		m1, w1 := detection(probesA, from.Add(interval), interval, steps)
		m2, w2 := detection(both, from.Add(interval), interval, steps)
		if w2 > interval/2 || w1 <= interval/2 {
			t.Errorf("%s: worst detection %s with one replica, %s with two; want two <= %s < one", name, w1, w2, interval/2)
		}
		oneMean += m1
		pairMean += m2
	}
	oneMean, pairMean = oneMean/n, pairMean/n
	t.Logf("mean detection over %d servers: one replica %s, a pair %s", n, oneMean, pairMean)
	if ratio := float64(pairMean) / float64(oneMean); ratio < 0.45 || ratio > 0.55 {
		t.Errorf("a pair detects in %s on average, one replica in %s: ratio %.2f, want about 0.5", pairMean, oneMean, ratio)
	}
}

// Ordinals past a pair split the interval evenly (bit-reversed ordinals);
// replicas named without an ordinal get phases of their own per server.
func TestReplicaPhases(t *testing.T) {
	const iv = 8 * time.Second
	for ordinal, want := range []time.Duration{0, 4 * time.Second, 2 * time.Second, 6 * time.Second, time.Second, 5 * time.Second} {
		if got := replicaOffset(ordinal, iv); got != want {
			t.Errorf("replicaOffset(%d) = %s, want %s", ordinal, got, want)
		}
	}
	x := replicaPlans(t, 50, "@every 1m", placement{replica: "host-a"})
	y := replicaPlans(t, 50, "@every 1m", placement{replica: "host-b"})
	same := 0
	for i := range x {
		px, py := x[i].sched.(phased).phase, y[i].sched.(phased).phase
		if px == py {
			same++
		}
		if px != phaseOf(x[i].cfg.Name, time.Minute, "host-a") {
			t.Errorf("%s: planned phase %s is not phaseOf's", x[i].cfg.Name, px)
		}
	}
	if same > 1 {
		t.Errorf("%d of 50 servers have the same phase on replicas host-a and host-b", same)
	}
}

package daemon

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The overall bound holds across servers: with concurrency 2, no more than
// two of five slow servers are probed at once, and two are.
func TestConcurrencyBound(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		servers := map[string]any{}
		for i := range 5 {
			name := "http-" + strconv.Itoa(i)
			servers[name] = fakeServerConfig(nil)
			fake.set(name, func(s *fakeServer) { s.took = 100 * time.Millisecond })
		}
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 10ms", "concurrency": 2},
			"servers":  servers,
		}, fake, Options{})
		s.until("20 probes", time.Minute, func() bool {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			n := 0
			for _, fs := range fake.servers {
				n += fs.probes
			}
			return n >= 20
		})
		fake.mu.Lock()
		most := fake.maxInFlight
		fake.mu.Unlock()
		if most != 2 {
			t.Errorf("at most %d probes ran at once, want exactly the bound 2", most)
		}
	})
}

// The stdio bound holds for real processes: with stdio_concurrency 2, five
// stdio servers that stall on tools/list (each holding its slot until its
// 60 s deadline) have two processes alive, and the other three probes wait
// for a slot without a process, while shared slots are free.
func TestStdioConcurrencyBound(t *testing.T) {
	marker := newMarker()
	servers := map[string]any{}
	for i := range 5 {
		servers["stdio-"+strconv.Itoa(i)] = merge(
			stdioServer(probetest.Config{Behavior: probetest.StallToolsList}, map[string]string{"LEAK_MARKER": marker}),
			map[string]any{"timeout": "60s"})
	}
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h", "concurrency": 8, "stdio_concurrency": 2},
		"servers":  servers,
	})
	h := start(t, path, Options{})
	// Two probes hold the stdio slots, three wait for one: nothing can
	// change until a deadline a minute away, or Close.
	waitFor(t, "two probes running and three waiting", func() bool {
		waiting, inUse, _ := h.d.prio.counts()
		return waiting == 3 && inUse == 2
	})
	waitFor(t, "the two servers started", func() bool { return len(markedProcesses(t, marker)) >= 2 })
	if alive := markedProcesses(t, marker); len(alive) != 2 {
		t.Errorf("%d stdio servers alive at once (%v), want the bound 2", len(alive), alive)
	}
}

// A reload that changes a server's schedule applies it at once; a server
// removed and added back has one schedule, not two.
func TestReloadReschedules(t *testing.T) {
	bubble(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := newFakeProber()
		config := func(servers map[string]any) {
			writeConfig(t, dir, map[string]any{"defaults": map[string]any{"schedule": "@every 1h"}, "servers": servers})
		}
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"a": fakeServerConfig(nil), "b": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()

		config(map[string]any{"a": fakeServerConfig(map[string]any{"schedule": "@every 50ms"}), "b": fakeServerConfig(nil)})
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		s.advance(time.Second)
		// One an hour before, one each 50 ms since the reload: within a
		// second, the first round's and about 20 more.
		if n := s.probes("a"); n < 15 || n > 22 {
			t.Errorf("a was probed %d times in the second after its schedule became @every 50ms", n)
		}
		if st := s.status("a"); st.Schedule != "@every 50ms" || st.IntervalSeconds != 0.05 {
			t.Errorf("schedule %q interval %v after reload", st.Schedule, st.IntervalSeconds)
		}

		config(map[string]any{"a": fakeServerConfig(nil)})
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		config(map[string]any{"a": fakeServerConfig(nil), "b": fakeServerConfig(nil)})
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		s.settle() // every slot fired is back in the timetable
		if live, settled := s.d.liveSlots(); !settled || live["a"] != 1 || live["b"] != 1 {
			t.Errorf("live slots per server = %v (settled %t), want exactly one each", live, settled)
		}
	})
}

func TestPprofOnlyWhenEnabled(t *testing.T) {
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"x": map[string]any{"url": "http://127.0.0.1:1/mcp"}},
	})
	for _, enabled := range []bool{false, true} {
		h := start(t, path, Options{EnablePprof: enabled})
		code, _ := h.get("/debug/pprof/")
		want := http.StatusNotFound
		if enabled {
			want = http.StatusOK
		}
		if code != want {
			t.Errorf("pprof enabled=%t: GET /debug/pprof/ = %d, want %d", enabled, code, want)
		}
	}
}

// liveSlots counts the slots in the timetable of each server's current
// schedule, and reports whether no slot was being fired: only then is a
// schedule's next slot sure to be in.
func (d *Daemon) liveSlots() (map[string]int, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	d.table.mu.Lock()
	defer d.table.mu.Unlock()
	live := map[string]int{}
	for _, sl := range d.table.slots {
		if s, ok := d.servers[sl.name]; ok && s.gen == sl.gen && !sl.calls {
			live[sl.name]++
		}
	}
	return live, d.table.firing == 0
}

// Scheduled probes due together wait in the daemon's queue, not each on a
// goroutine of its own: with concurrency 2 and 50 servers due in the first
// round, two probes are asked of the prober (and hold their slots) while
// 48 wait in the queue, still counted as scheduled probes waiting for a
// slot. Once the two end, the queue starts the rest, two at a time, in
// the order they came due, and every server is probed once.
func TestDueProbesWaitInTheQueue(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		hold := make(chan struct{})
		servers := map[string]any{}
		for i := range 50 {
			name := "http-" + strconv.Itoa(i)
			servers[name] = fakeServerConfig(nil)
			fake.set(name, func(s *fakeServer) { s.hold = hold })
		}
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "concurrency": 2},
			"servers":  servers,
		}, fake, Options{})
		s.until("the first round due", time.Minute, func() bool {
			waiting, inUse, _ := s.d.prio.counts()
			return waiting == 48 && inUse == 2
		})
		s.settle() // every goroutine of the bubble blocked: none is on its way to the prober
		fake.mu.Lock()
		entered := fake.entered
		fake.mu.Unlock()
		if entered != 2 || s.d.starts.queued() != 48 {
			t.Fatalf("%d probes asked of the prober and %d queued, want 2 (the pool's bound) and 48", entered, s.d.starts.queued())
		}
		close(hold)
		s.until("every server probed", time.Minute, func() bool {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			return len(fake.started) == 50
		})
		s.settle()
		fake.mu.Lock()
		defer fake.mu.Unlock()
		if fake.entered != 50 || fake.maxInFlight != 2 {
			t.Errorf("%d probes asked, at most %d at once; want 50, at most 2", fake.entered, fake.maxInFlight)
		}
		if waiting, inUse, _ := s.d.prio.counts(); waiting != 0 || inUse != 0 {
			t.Errorf("after the round: %d scheduled probes waiting, %d slots in use; want none", waiting, inUse)
		}
	})
}

package daemon

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The overall bound holds across servers: with concurrency 2, no more than
// two of five slow servers are listing tools at once, and two do (the
// lister holds the first lists until two are in progress).
func TestConcurrencyBound(t *testing.T) {
	lister := &slowLister{next: probetest.Handler(probetest.Config{}), delay: 100 * time.Millisecond,
		gather: 2, gathered: make(chan struct{})}
	srv := httptest.NewServer(lister)
	defer srv.Close()
	servers := map[string]any{}
	for i := range 5 {
		servers["http-"+strconv.Itoa(i)] = map[string]any{"url": srv.URL, "transport": "http"}
	}
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 10ms", "concurrency": 2},
		"servers":  servers,
	})
	start(t, path, Options{})
	waitFor(t, "20 tools/list calls", func() bool { return lister.lists.Load() >= 20 })
	if m := lister.maxInList.Load(); m != 2 {
		t.Errorf("at most %d probes listed tools at once, want exactly the bound 2", m)
	}
}

// The stdio bound holds too: with stdio_concurrency 2, no more than two
// stalled stdio servers are alive at once, while more shared slots are free.
func TestStdioConcurrencyBound(t *testing.T) {
	marker := newMarker()
	servers := map[string]any{}
	for i := range 5 {
		servers["stdio-"+strconv.Itoa(i)] = merge(
			stdioServer(probetest.Config{Behavior: probetest.StallToolsList}, map[string]string{"LEAK_MARKER": marker}),
			map[string]any{"timeout": "400ms"})
	}
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 10ms", "concurrency": 8, "stdio_concurrency": 2},
		"servers":  servers,
	})
	h := start(t, path, Options{})
	// Watched until ten probes have ended (each holds its server for its
	// 400 ms timeout), not for a fixed time that a busy machine may spend
	// before the first server even starts.
	most := 0
	waitFor(t, "ten stdio probes", func() bool {
		most = max(most, len(markedProcesses(t, marker)))
		probes := uint64(0)
		for _, st := range h.d.Statuses() {
			probes += st.Probes
		}
		return probes >= 10
	})
	if most > 2 {
		t.Errorf("%d stdio servers alive at once, want at most 2", most)
	}
	if most == 0 {
		t.Errorf("no stdio server was seen running")
	}
	for _, st := range h.d.Statuses() {
		if st.Last != nil && st.Last.Reason != "timeout" {
			t.Errorf("server %s failed with %q, want timeout", st.Name, st.Last.Reason)
		}
	}
}

// A reload that changes a server's schedule applies it at once; a server
// removed and added back has one schedule, not two.
func TestReloadReschedules(t *testing.T) {
	dir := t.TempDir()
	healthy := stdioServer(probetest.Config{}, nil)
	write := func(servers map[string]any) {
		writeConfig(t, dir, map[string]any{"defaults": map[string]any{"schedule": "@every 1h"}, "servers": servers})
	}
	write(map[string]any{"a": healthy, "b": healthy})
	h := start(t, dir+"/mcpwatch.yml", Options{})
	waitFor(t, "the first round", h.d.Ready)

	write(map[string]any{"a": merge(healthy, map[string]any{"schedule": "@every 50ms"}), "b": healthy})
	if err := h.d.Reload(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a on its new schedule", func() bool { return h.status("a").Probes >= 4 })
	if st := h.status("a"); st.Schedule != "@every 50ms" || st.IntervalSeconds != 0.05 {
		t.Errorf("schedule %q interval %v after reload", st.Schedule, st.IntervalSeconds)
	}

	write(map[string]any{"a": healthy})
	if err := h.d.Reload(); err != nil {
		t.Fatal(err)
	}
	write(map[string]any{"a": healthy, "b": healthy})
	if err := h.d.Reload(); err != nil {
		t.Fatal(err)
	}
	// b's first slot comes due within AddedSpread, and a fired slot is out
	// of the timetable until its next one is in: count between firings.
	var live map[string]int
	waitFor(t, "the timetable between two firings", func() bool {
		var settled bool
		live, settled = h.d.liveSlots()
		return settled
	})
	if live["a"] != 1 || live["b"] != 1 {
		t.Errorf("live slots per server = %v, want exactly one each", live)
	}
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

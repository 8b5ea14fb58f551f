package daemon

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// heapAndStacks is what the Go heap and the goroutines' stacks hold after
// a collection: the memory a fleet's state and its probes in flight take,
// without the collector's headroom.
func heapAndStacks() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

// The first round of a fleet over streamable HTTP, the real prober against
// a real server, at its peak and once it is over. The peak is made on
// purpose: the fleet's server holds every request until as many are in
// flight as the pool runs probes at once (defaults.concurrency, 128), so
// every slot is busy and every other server's first probe waits to start,
// all of them due together. What that state holds beyond the servers'
// own state is the first round's transient: the probes' connections,
// buffers and goroutines, and the due probes waiting (a goroutine each,
// with its stack, in v0.2.0, before the start queue: 10.3 MB of transient
// here, and 16.5 kB kept a server). After the round, what each server
// keeps.
func TestFirstRoundMemory(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("measures the heap: not in -short or -race runs")
	}
	const (
		n           = 2000
		concurrency = 128 // the default
		// Budgets, with room over what this build measures: 1 MB of
		// transient at the peak (128 probes waiting on their answers,
		// 1,872 due probes in the queue) and 7.7 kB a server after the
		// round (its state, configuration, history and counters).
		maxTransient   = 4 << 20 // bytes
		maxPerServerKB = 10.0
	)
	kit := probetest.NewServer(probetest.Config{Era: probetest.EraModern, Tools: probetest.Surface(25)})
	defer kit.Close()
	var (
		inFlight, lists atomic.Int64
		full, release   = make(chan struct{}), make(chan struct{})
		fullOnce        sync.Once
	)
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inFlight.Add(1) >= concurrency {
			fullOnce.Do(func() { close(full) })
		}
		<-release
		kit.ServeHTTP(w, r)
		inFlight.Add(-1)
		if r.Header.Get("Mcp-Method") == "tools/list" {
			lists.Add(1)
		}
	}))
	defer fleet.Close()
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%04d", i)] = map[string]any{"url": fmt.Sprintf("%s/s/%d/mcp", fleet.URL, i), "transport": "http"}
	}
	path := writeConfig(t, t.TempDir(), map[string]any{
		// A timeout no busy machine reaches while the round is held.
		"defaults": map[string]any{"schedule": "@every 1h", "timeout": "5m"},
		"servers":  servers,
	})

	base := heapAndStacks()
	h := start(t, path, Options{})
	testtool.Within(t, "the pool's slots to fill with held requests", func() struct{} { <-full; return struct{}{} })
	peak := heapAndStacks() - base
	held := inFlight.Load()
	close(release)
	waitFor(t, "the first round", func() bool { return lists.Load() >= n && h.d.Ready() })
	after := heapAndStacks() - base

	perServer := after / n / 1024
	transient := peak - after
	t.Logf("the first round of %d servers: %.1f MB at its peak (%d requests held), %.1f MB after it (%.2f kB a server): %.1f MB of transient",
		n, peak/(1<<20), held, after/(1<<20), perServer, transient/(1<<20))
	if transient > maxTransient {
		t.Errorf("at the first round's peak the fleet holds %.1f MB more than after it; want at most %d MB", transient/(1<<20), maxTransient>>20)
	}
	if perServer > maxPerServerKB {
		t.Errorf("after the first round a server retains %.2f kB; want at most %.1f kB", perServer, maxPerServerKB)
	}
}

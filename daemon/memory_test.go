package daemon

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// toolsPage is a tools/list result of n tools with schemas of the size real
// servers send (a dozen typed properties with descriptions, an output
// schema, annotations): about 2.5 kB of JSON per tool.
func toolsPage(n int) []byte {
	var tools []map[string]any
	for i := range n {
		props := map[string]any{}
		for p := range 12 {
			props[fmt.Sprintf("param_%d", p)] = map[string]any{
				"type":        []string{"string", "integer", "boolean"}[p%3],
				"description": fmt.Sprintf("What parameter %d of tool %d means, in a sentence or two of documentation.", p, i),
			}
		}
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("tool_%02d", i),
			"description": fmt.Sprintf("Tool %d does something useful with the parameters it is given.", i),
			"inputSchema": map[string]any{"type": "object", "properties": props, "required": []string{"param_0", "param_1"}},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"result": map[string]any{"type": "string", "description": "The outcome of the call."},
				"count":  map[string]any{"type": "integer"},
			}},
			"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false, "title": fmt.Sprintf("Tool %d", i)},
		})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		panic(err)
	}
	return b
}

// probed decodes page afresh, as each probe does, into a result and the
// observed tools runner.Probe hands the daemon.
func probed(t testing.TB, page []byte, ok bool, at time.Time) (*probe.Result, []lockstore.Observed) {
	res := &probe.Result{
		Transport: probe.TransportHTTP, Started: at, OK: ok,
		Era: probe.EraModern, ProtocolVersion: "2025-06-18", ServerName: "example", ServerVersion: "1.2.3",
		Timings: probe.Timings{Total: 20 * time.Millisecond},
	}
	if !ok {
		res.Reason, res.Error = probe.ReasonTimeout, "no answer within 10s"
		return res, nil
	}
	if err := json.Unmarshal(page, &res.Tools); err != nil {
		t.Fatal(err)
	}
	obs := make([]lockstore.Observed, len(res.Tools))
	for i, tool := range res.Tools {
		obs[i] = lockstore.Observed{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema}
	}
	return res, obs
}

// retainedPerServer is the heap n servers hold after 20 probes each of a
// server listing 40 tools, the last of them failed when lastFails.
func retainedPerServer(t *testing.T, lock *lockstore.Lock, lastFails bool) (perServer, perResult float64) {
	const (
		n      = 100
		probes = 20
		tools  = 40
	)
	page := toolsPage(tools)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	servers := make([]*server, n)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range servers {
		name := fmt.Sprintf("server-%03d", i)
		s := newServer(t.Context(), config.Server{Name: name, URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
		for p := range probes {
			res, obs := probed(t, page, !(lastFails && p == probes-1), at.Add(time.Duration(p)*time.Minute))
			s.recordResult(triggerSchedule, res, obs, lock, nil, nil)
		}
		servers[i] = s
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(servers)
	return float64(after.HeapAlloc-before.HeapAlloc) / n, float64(len(page))
}

// What a server retains after 20 probes: the history holds no tools and no
// result (a verdict pointing into its transition once chained every result
// the server ever returned: 22x the tool list after 20 probes), only the
// latest result keeps the tool names, with their fingerprints and
// description hashes, and a server whose last probe failed keeps of its last
// successful one only what the info series needs.
func TestRetainedMemoryPerServer(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("measures the heap: not in -short or -race runs")
	}
	fingerprinted := lockstore.New()
	_, obs := probed(t, toolsPage(40), true, time.Now())
	for i := range 100 {
		fingerprinted.Set(fmt.Sprintf("server-%03d", i), lockstore.NewEntry(obs, true))
	}
	for _, tc := range []struct {
		name      string
		lock      *lockstore.Lock
		lastFails bool
		maxRatio  float64 // retained per server / JSON of the tool list
	}{
		// Names, fingerprints and description hashes, not the tools'
		// text (which cost 1.6x the list before), and those lists shared
		// by the servers that list the same tools, the fingerprint
		// cache's and the diff's too (0.23x when each kept its own).
		{"unlocked, all ok", nil, false, 0.025},
		{"fingerprinted, all ok", fingerprinted, false, 0.025},
		// The fingerprint cache (fingerprints and description hashes)
		// stays across failures, so that the next success reuses it
		// (0.12x when each server kept its own).
		{"unlocked, last failed", nil, true, 0.035},
		{"fingerprinted, last failed", fingerprinted, true, 0.035},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per, page := retainedPerServer(t, tc.lock, tc.lastFails)
			t.Logf("retained per server: %.0f B (%.2fx the %0.f B tool list)", per, per/page, page)
			if per/page > tc.maxRatio {
				t.Errorf("a server retains %.0f B, %.2fx its tool list's JSON; want at most %.1fx", per, per/page, tc.maxRatio)
			}
		})
	}
}

// Servers that list the same tools keep one list of their names and one of
// their fingerprints between them, and a server that lists others keeps its
// own.
func TestServersShareToolLists(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	record := func(name string, page []byte) *server {
		s := newServer(t.Context(), config.Server{Name: name, URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
		res, obs := probed(t, page, true, at)
		s.recordResult(triggerSchedule, res, obs, nil, nil, nil)
		return s
	}
	a, b, other := record("a", toolsPage(5)), record("b", toolsPage(5)), record("other", toolsPage(4))
	if &a.status.Last.Tools[0] != &b.status.Last.Tools[0] {
		t.Error("two servers listing the same tools keep two lists of their names")
	}
	if &a.observed[0] != &b.observed[0] {
		t.Error("two servers listing the same tools keep two lists of their fingerprints")
	}
	if len(a.status.Diff.Extra) != 5 || &a.status.Diff.Extra[0] != &b.status.Diff.Extra[0] {
		t.Errorf("two servers listing the same unlocked tools keep two lists of them in their diffs (%d extra)", len(a.status.Diff.Extra))
	}
	if len(other.status.Last.Tools) != 4 || len(other.observed) != 4 || &other.observed[0] == &a.observed[0] {
		t.Errorf("a server listing 4 tools shares the list of one listing 5: %d names, %d observed", len(other.status.Last.Tools), len(other.observed))
	}
	for i, o := range a.observed {
		if o.Name != fmt.Sprintf("tool_%02d", i) || o.Fingerprint == "" || o.DescriptionHash == "" || o.Description != "" || o.InputSchema != nil {
			t.Errorf("kept tool %d is %+v; want its name, fingerprint and description hash alone", i, o)
		}
	}
}

// A server whose tools carry 12 MiB of descriptions and schemas (under the
// probe's list cap of 16 MiB) keeps their names and hashes between probes,
// not their text: it kept the whole list for as long as it ran (100 pages
// of 4 MiB held 635 MB of heap before the list cap).
func TestRetainedMemoryHugeTools(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("measures the heap: not in -short or -race runs")
	}
	page, fingerprintedLock := hugeTools(t)
	retained := func(lock *lockstore.Lock) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC() // twice: a sync.Pool keeps json.Marshal's 12 MB buffer through one
		runtime.ReadMemStats(&before)
		s := newServer(t.Context(), config.Server{Name: "huge", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
		record := func() { // res and obs go out of scope with it
			res, obs := probed(t, page, true, time.Now())
			s.recordResult(triggerSchedule, res, obs, lock, nil, nil)
		}
		record()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		return float64(after.HeapAlloc) - float64(before.HeapAlloc)
	}
	for name, lock := range map[string]*lockstore.Lock{"unlocked": nil, "fingerprinted": fingerprintedLock} {
		got := retained(lock)
		t.Logf("%s: retained %.0f B of a %d B tool list", name, got, len(page))
		if got > 64<<10 {
			t.Errorf("%s: the server retains %.0f B of a %d B tool list; want names and hashes only (under 64 KiB)", name, got, len(page))
		}
	}
}

// hugeTools is a tools/list result of three tools with 4 MiB descriptions
// and 100 KiB schemas, and a lock of them with fingerprints.
func hugeTools(t *testing.T) ([]byte, *lockstore.Lock) {
	var tools []map[string]any
	for i := range 3 {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("huge_%d", i),
			"description": strings.Repeat("d", 4<<20-200<<10),
			"inputSchema": map[string]any{"type": "object", "description": strings.Repeat("s", 100<<10)},
		})
	}
	page, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	lock := lockstore.New()
	_, obs := probed(t, page, true, time.Now())
	lock.Set("huge", lockstore.NewEntry(obs, true))
	return page, lock
}

// A server that lists the same tools again keeps its kept tools and its
// diff as they were (no new slice, no comparison made again), and any
// change of what the diff is made of (the tools, the lock, forbid) makes
// it again.
func TestSteadyServerKeepsItsDiff(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	page := toolsPage(3)
	lock := lockstore.New()
	lock.Set("s", lockstore.Entry{Tools: []lockstore.ToolLock{{Name: "tool_00"}, {Name: "tool_01"}}})
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	record := func(page []byte, lock *lockstore.Lock, forbid []string) lockstore.Diff {
		res, obs := probed(t, page, true, at)
		at = at.Add(time.Minute)
		s.recordResult(triggerSchedule, res, obs, lock, forbid, nil)
		return s.snapshot().Diff
	}
	first := record(page, lock, nil)
	kept := s.listed
	again := record(page, lock, nil)
	if &again.Expected[0] != &first.Expected[0] || &s.listed[0] != &kept[0] {
		t.Errorf("the same tools again: the diff or the kept tools were made anew")
	}
	if d := record(page, lock, []string{"tool_02"}); strings.Join(d.Forbidden, ",") != "tool_02" {
		t.Errorf("forbid changed: forbidden %v, want [tool_02]", d.Forbidden)
	}
	wider := lockstore.New()
	wider.Set("s", lockstore.Entry{Tools: []lockstore.ToolLock{{Name: "tool_00"}, {Name: "tool_09"}}})
	if d := record(page, wider, []string{"tool_02"}); strings.Join(d.Missing, ",") != "tool_09" {
		t.Errorf("lock changed: missing %v, want [tool_09]", d.Missing)
	}
	if d := record(toolsPage(10), wider, []string{"tool_02"}); len(d.Missing) != 0 {
		t.Errorf("tools changed: missing %v, want none", d.Missing)
	}
}

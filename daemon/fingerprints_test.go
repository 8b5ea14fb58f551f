package daemon

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	probepkg "github.com/mcpwatch/mcpwatch/probe"
)

// A server's schema fingerprints are computed once and reused while the
// schema's bytes stay the same, probe after probe: only a changed or new
// tool costs one. The comparison is the same as without the cache, and the
// cache holds the current tools only.
func TestFingerprintsReusedWhileSchemasUnchanged(t *testing.T) {
	const tools = 40
	page := toolsPage(tools)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, first := probed(t, page, true, at)
	lock := lockstore.New()
	lock.Set("s", lockstore.NewEntry(first, true))
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)

	probe := func(edit func([]lockstore.Observed) []lockstore.Observed) {
		t.Helper()
		res, obs := probed(t, page, true, at) // decoded afresh: new bytes, same content
		obs = edit(obs)
		s.recordResult(triggerSchedule, res, obs, lock, nil)
	}
	same := func(o []lockstore.Observed) []lockstore.Observed { return o }
	computed := func() uint64 { s.mu.Lock(); defer s.mu.Unlock(); return s.fingerprints.computed }
	diff := func() lockstore.Diff { s.mu.Lock(); defer s.mu.Unlock(); return s.status.Diff }

	probe(same)
	if got := computed(); got != tools {
		t.Fatalf("first probe computed %d fingerprints, want %d", got, tools)
	}
	for range 3 {
		probe(same)
	}
	if got := computed(); got != tools {
		t.Errorf("after three more probes of the same schemas %d fingerprints computed in all, want still %d", got, tools)
	}
	if d := diff(); len(d.SchemaChanged) != 0 {
		t.Errorf("unchanged schemas reported changed: %v", d.SchemaChanged)
	}

	probe(func(o []lockstore.Observed) []lockstore.Observed {
		o[7].InputSchema = json.RawMessage(`{"type":"object","properties":{"param_0":{"type":"number"}}}`)
		return o
	})
	if got := computed(); got != tools+1 {
		t.Errorf("one schema changed: %d fingerprints computed in all, want %d", got, tools+1)
	}
	if d := diff(); !slices.Equal(d.SchemaChanged, []string{"tool_07"}) {
		t.Errorf("SchemaChanged = %v, want [tool_07]", d.SchemaChanged)
	}

	probe(func(o []lockstore.Observed) []lockstore.Observed { return o[:10] })
	s.mu.Lock()
	if n := len(s.fingerprints.byName); n != 10 {
		t.Errorf("the cache holds %d tools after a probe that listed 10", n)
	}
	s.mu.Unlock()
}

// A names-only lock needs no fingerprint, and none is computed; a lock that
// gains fingerprints gets them computed when the server is compared again.
func TestNoFingerprintsForANamesOnlyLock(t *testing.T) {
	page := toolsPage(5)
	res, obs := probed(t, page, true, time.Now())
	plain := lockstore.New()
	plain.Set("s", lockstore.NewEntry(obs, false))
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	s.recordResult(triggerSchedule, res, obs, plain, nil)
	if s.fingerprints.computed != 0 {
		t.Errorf("%d fingerprints computed for a names-only lock", s.fingerprints.computed)
	}

	_, again := probed(t, page, true, time.Now())
	rich := lockstore.New()
	again[2].InputSchema = json.RawMessage(`{"type":"object"}`)
	rich.Set("s", lockstore.NewEntry(again, true))
	if _, judged := s.relock(rich, nil); !judged {
		t.Fatal("the server was not compared with the new lock")
	}
	if s.fingerprints.computed != 5 {
		t.Errorf("%d fingerprints computed on relock, want 5", s.fingerprints.computed)
	}
	if d := s.status.Diff; !slices.Equal(d.SchemaChanged, []string{"tool_02"}) {
		t.Errorf("SchemaChanged = %v, want [tool_02]", d.SchemaChanged)
	}
}

// BenchmarkRecordFingerprinted is the daemon's cost of recording one probe
// of a server of 40 tools against a lock with fingerprints.
func BenchmarkRecordFingerprinted(b *testing.B) {
	page := toolsPage(40)
	at := time.Now()
	_, obs := probed(b, page, true, at)
	lock := lockstore.New()
	lock.Set("s", lockstore.NewEntry(obs, true))
	s := newServer(b.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	results := make([]struct {
		res *probepkg.Result
		obs []lockstore.Observed
	}, 8)
	for i := range results {
		results[i].res, results[i].obs = probed(b, page, true, at)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := results[i%len(results)]
		o := slices.Clone(r.obs)
		for j := range o {
			o[j].Fingerprint = ""
		}
		s.recordResult(triggerSchedule, r.res, o, lock, nil)
	}
}

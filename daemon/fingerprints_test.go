package daemon

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	probepkg "github.com/mcpwatch/mcpwatch/probe"
)

// A names-only lock needs no fingerprint, and none is computed; a lock that
// gains fingerprints has them computed (outside the server's lock) when the
// server is compared again, and kept with the observed tools, so comparing
// under the lock computes none.
func TestNoFingerprintsForANamesOnlyLock(t *testing.T) {
	page := toolsPage(5)
	res, obs := probed(t, page, true, time.Now())
	plain := lockstore.New()
	plain.Set("s", lockstore.NewEntry(obs, false))
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	s.recordResult(triggerSchedule, res, fingerprinted(obs, plain, "s"), plain, nil, nil)
	if slices.ContainsFunc(s.observed, func(o lockstore.Observed) bool { return o.Fingerprint != "" }) {
		t.Errorf("fingerprints computed for a names-only lock")
	}

	_, again := probed(t, page, true, time.Now())
	rich := lockstore.New()
	again[2].InputSchema = json.RawMessage(`{"type":"object"}`)
	rich.Set("s", lockstore.NewEntry(again, true))
	if _, judged := s.relock(rich, nil); !judged {
		t.Fatal("the server was not compared with the new lock")
	}
	if slices.ContainsFunc(s.observed, func(o lockstore.Observed) bool { return o.Fingerprint == "" }) {
		t.Errorf("after relocking against fingerprints, observed tools lack them")
	}
	if d := s.status.Diff; !slices.Equal(d.SchemaChanged, []string{"tool_02"}) {
		t.Errorf("SchemaChanged = %v, want [tool_02]", d.SchemaChanged)
	}
}

// BenchmarkRecordFingerprinted is the daemon's cost of recording one probe
// of a server of 40 tools against a lock with fingerprints: the cached
// fingerprints filled in (as the probe does, within its deadline), then the
// result recorded.
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
		if err := s.fingerprints.Fill(b.Context(), o); err != nil {
			b.Fatal(err)
		}
		s.recordResult(triggerSchedule, r.res, o, lock, nil, nil)
	}
}

package daemon

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/lockstore"
	probepkg "github.com/mcpwatch/mcpwatch/probe"
)

// The daemon keeps each tool's fingerprint and description hash, not its
// schema and description, whatever the lock: a lock that gains
// fingerprints is compared at once with what the last probe saw.
func TestRelockComparesFingerprints(t *testing.T) {
	page := toolsPage(5)
	res, obs := probed(t, page, true, time.Now())
	plain := lockstore.New()
	plain.Set("s", lockstore.NewEntry(obs, false))
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	s.recordResult(triggerSchedule, res, obs, plain, nil, nil)
	for _, o := range s.observed {
		if o.Fingerprint == "" || o.DescriptionHash == "" || o.Description != "" || o.InputSchema != nil {
			t.Fatalf("kept %+v, want the name and hashes only", o)
		}
	}

	_, again := probed(t, page, true, time.Now())
	rich := lockstore.New()
	again[2].InputSchema = json.RawMessage(`{"type":"object"}`)
	again[3].Description = "rewritten"
	rich.Set("s", lockstore.NewEntry(again, true))
	if _, judged := s.relock(rich, nil); !judged {
		t.Fatal("the server was not compared with the new lock")
	}
	if d := s.status.Diff; !slices.Equal(d.SchemaChanged, []string{"tool_02"}) || !slices.Equal(d.DescriptionChanged, []string{"tool_03"}) {
		t.Errorf("SchemaChanged = %v, DescriptionChanged = %v, want [tool_02] and [tool_03]", d.SchemaChanged, d.DescriptionChanged)
	}
}

// BenchmarkRecordFingerprinted is the daemon's cost of recording one probe
// of a server of 40 tools against a lock with fingerprints: the cached
// fingerprints filled in and the descriptions hashed (retainedTools), then
// the result recorded.
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
		s.recordResult(triggerSchedule, r.res, o, lock, nil, nil)
	}
}

// A call's outcome is kept without the content the server answered with:
// its one-line response says what came back.
func TestRecordCallsKeepsNoContent(t *testing.T) {
	s := newServer(t.Context(), config.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}, every(time.Minute), time.Minute, 20)
	s.status.Calls = []status.Call{{Tool: "t"}}
	big := json.RawMessage(`[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]`)
	s.recordCalls([]contracts.Outcome{{Tool: "t", Reason: contracts.ReasonIsError, Attempts: []contracts.Attempt{
		{Call: &probepkg.CallResult{Tool: "t", Answered: true, IsError: true, Content: big, StructuredContent: big}, Response: "isError: xxx"},
	}}}, &probepkg.Result{OK: true}, true)
	last := s.status.Calls[0].Last
	if a := last.Attempts[0]; a.Call.Content != nil || a.Call.StructuredContent != nil || a.Response != "isError: xxx" || !a.Call.IsError {
		t.Errorf("kept %+v", a)
	}
	if s.status.Calls[0].LastFailure != last {
		t.Error("the failure is not the last outcome")
	}
}

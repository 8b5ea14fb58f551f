package daemon

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A ring holds its last limit records, oldest first, and never grows its
// slice past the limit (append alone would reach 32 for 20).
func TestRingGrowsToItsLimit(t *testing.T) {
	for _, limit := range []int{1, 3, 20, 100} {
		r := ring{limit: limit}
		var seq uint64
		for range 3 * limit {
			r.add(keptRecord{seq: seq})
			seq++
			if cap(r.items) > limit {
				t.Fatalf("limit %d: %d records held in a slice of %d", limit, len(r.items), cap(r.items))
			}
		}
		if len(r.items) != limit || r.items[len(r.items)-1].seq != seq-1 {
			t.Fatalf("limit %d: %d records, the last %d; want %d, the last %d", limit, len(r.items), r.items[len(r.items)-1].seq, limit, seq-1)
		}
		for i := 1; i < len(r.items); i++ {
			if r.items[i].seq != r.items[i-1].seq+1 {
				t.Errorf("limit %d: records %d and %d out of order", limit, r.items[i-1].seq, r.items[i].seq)
			}
		}
	}
}

// A record comes back from the history as it went in.
func TestKeptRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123, time.Local)
	for _, r := range []Record{
		{Seq: 7, Trigger: triggerSchedule, State: verdict.StateMissing, Started: at, Duration: 1500 * time.Millisecond, DurationSeconds: 1.5,
			Era: probe.EraLegacy, ProtocolVersion: "2025-06-18", Tools: 3, Expected: 4, Missing: []string{"a"}, Extra: []string{"b", "c"},
			Forbidden: []string{"d"}, FailedCalls: []string{"e"}},
		{Seq: 8, Trigger: "request", State: verdict.StateFailed, Reason: probe.ReasonTimeout, Error: "no answer within 10s", StderrTail: "boom"},
	} {
		if got := keep(r, nil).record(); !reflect.DeepEqual(got, r) {
			t.Errorf("kept and read back:\n got %#v\nwant %#v", got, r)
		}
	}
}

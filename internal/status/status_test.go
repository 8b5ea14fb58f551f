package status

import (
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The latest outcomes are those of the tools called so far, in tool order:
// what a server is judged with.
func TestLatestCalls(t *testing.T) {
	st := Server{Calls: []Call{
		{Tool: "a", Last: &contracts.Outcome{Tool: "a", Passed: true}},
		{Tool: "b"}, // not called yet
		{Tool: "c", Last: &contracts.Outcome{Tool: "c", Reason: contracts.ReasonIsError}},
	}}
	var tools []string
	for _, o := range st.LatestCalls() {
		tools = append(tools, o.Tool)
	}
	if !slices.Equal(tools, []string{"a", "c"}) {
		t.Errorf("latest calls of %v, want a and c", tools)
	}
}

// What a server is judged with, table by table: the latest outcome of
// each call made, in the order of the calls, whatever failed before; none
// for a server without calls, or whose calls have not ended yet.
func TestLatestCallsTable(t *testing.T) {
	failed := &contracts.Outcome{Tool: "b", Reason: contracts.ReasonIsError, Message: "first"}
	passed := &contracts.Outcome{Tool: "b", Passed: true}
	for _, tc := range []struct {
		name  string
		calls []Call
		want  []string // tool and passed, of each outcome
	}{
		{"no contracts", nil, nil},
		{"none ended yet", []Call{{Tool: "a"}, {Tool: "b"}}, nil},
		{"a call that passed after one failed", []Call{{Tool: "b", Last: passed, LastFailure: failed, Calls: 2}}, []string{"b passed"}},
		{"its failure kept for the page, not judged", []Call{{Tool: "b", LastFailure: failed}}, nil},
		{"in the order of the calls, not sorted again", []Call{{Tool: "z", Last: &contracts.Outcome{Tool: "z"}}, {Tool: "a", Last: &contracts.Outcome{Tool: "a", Passed: true}}},
			[]string{"z failed", "a passed"}},
	} {
		st := Server{Name: "s", Calls: tc.calls}
		var got []string
		for _, o := range st.LatestCalls() {
			state := "failed"
			if o.Passed {
				state = "passed"
			}
			got = append(got, o.Tool+" "+state)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The outcomes returned are copies: a reader that changes one (a renderer
// that escapes its message in place) changes nothing of the published
// status, which other readers share.
func TestLatestCallsAreCopies(t *testing.T) {
	st := Server{Calls: []Call{{Tool: "a", Last: &contracts.Outcome{Tool: "a", Message: "server said: <b>"}}}}
	got := st.LatestCalls()
	got[0].Message, got[0].Passed = "escaped", true
	if last := st.Calls[0].Last; last.Message != "server said: <b>" || last.Passed {
		t.Errorf("changing the outcome returned changed the status: %+v", last)
	}
}

// A published status is read by the metrics handler, the status page and
// the JSON API at once: LatestCalls only reads it (run with -race).
func TestLatestCallsConcurrentReaders(t *testing.T) {
	st := &Server{Calls: []Call{{Tool: "a", Last: &contracts.Outcome{Tool: "a", Passed: true}}, {Tool: "b"}}}
	var wg sync.WaitGroup
	results := make([]int, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = len(st.LatestCalls())
		}()
	}
	wg.Wait()
	for i, n := range results {
		if n != 1 {
			t.Errorf("reader %d saw %d outcomes, want 1", i, n)
		}
	}
}

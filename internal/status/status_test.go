package status

import (
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
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

// A server is judged with its latest calls (as the daemon judges it when
// one is recorded): a call that broke its contract and then passed leaves
// the server ok; one whose latest call broke it is call_failed, naming
// the tool.
func TestJudgedWithLatestCalls(t *testing.T) {
	broke := &contracts.Outcome{Tool: "read", Reason: contracts.ReasonIsError, Message: "isError"}
	for _, tc := range []struct {
		name  string
		calls []Call
		state verdict.State
	}{
		{"passed after it broke", []Call{{Tool: "read", Last: &contracts.Outcome{Tool: "read", Passed: true}, LastFailure: broke}}, verdict.StateOK},
		{"broke last", []Call{{Tool: "read", Last: broke, LastFailure: broke}}, verdict.StateCallFailed},
		{"not called yet", []Call{{Tool: "read"}}, verdict.StateOK},
	} {
		st := Server{Name: "s", Last: &probe.Result{OK: true, Tools: []probe.Tool{{Name: "read"}}}, Calls: tc.calls}
		j := verdict.JudgeServer(st.Last, st.Diff, st.LatestCalls())
		if j.State != tc.state || tc.state == verdict.StateCallFailed && !slices.Equal(j.Calls, []string{"read"}) {
			t.Errorf("%s: judged %s (calls %v), want %s", tc.name, j.State, j.Calls, tc.state)
		}
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

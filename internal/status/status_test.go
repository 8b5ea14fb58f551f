package status

import (
	"slices"
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

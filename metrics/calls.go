package metrics

import (
	"github.com/mcpwatch/mcpwatch/internal/contracts"

	"github.com/mcpwatch/mcpwatch/internal/status"
)

// The canary-call families: one series per contracted tool, rendered from
// the latest outcomes. A tool whose contract is gone is not in st.Calls,
// so its series vanish at once.

func renderCallSuccess(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		if c := &st.Calls[i]; c.Last != nil {
			t.sample(boolValue(c.Last.Passed), labelValue(c.Tool, maxToolLabelBytes))
		}
	}
}

func renderCallDuration(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		if c := &st.Calls[i]; c.Last != nil {
			t.sample(c.Last.Duration.Seconds(), labelValue(c.Tool, maxToolLabelBytes))
		}
	}
}

func renderLastCall(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		if c := &st.Calls[i]; c.Last != nil {
			t.sample(unixSeconds(c.Last.Started.Add(c.Last.Duration)), labelValue(c.Tool, maxToolLabelBytes))
		}
	}
}

// renderCallLastFailure names why the last call failed, in a series of
// value 1 present only while it fails: an alert can say why a tool fails
// now, where the counters only say which reason was most frequent.
func renderCallLastFailure(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		if c := &st.Calls[i]; c.Last != nil && !c.Last.Passed && c.Last.Reason != "" {
			t.sample(1, labelValue(c.Tool, maxToolLabelBytes), string(c.Last.Reason))
		}
	}
}

// renderCallFailures writes every reason from 0, for every contracted tool
// (called yet or not), so increase() counts a first failure.
func renderCallFailures(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		c := &st.Calls[i]
		tool := labelValue(c.Tool, maxToolLabelBytes)
		for _, r := range contracts.Reasons {
			t.sample(float64(c.Failures[r]), tool, string(r))
		}
	}
}

func renderCallInterval(t *TextWriter, st *status.Server) {
	if len(st.Calls) > 0 && st.CallInterval > 0 {
		t.sample(st.CallInterval.Seconds())
	}
}

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

// renderCallFailures writes a reason's series from the tool's first
// failure of that reason on, as renderFailures does for probes: 15 reasons
// from 0 were 1.3 kB a contracted tool, nearly all 0. Why the last call
// failed is mcpwatch_call_last_failure_info, which the alert reads.
func renderCallFailures(t *TextWriter, st *status.Server) {
	for i := range st.Calls {
		c := &st.Calls[i]
		if len(c.Failures) == 0 {
			continue // most tools, at every scrape
		}
		tool := labelValue(c.Tool, maxToolLabelBytes)
		for _, r := range contracts.Reasons {
			if n := c.Failures[r]; n > 0 {
				t.sample(float64(n), tool, string(r))
			}
		}
	}
}

func renderCallInterval(t *TextWriter, st *status.Server) {
	if len(st.Calls) > 0 && st.CallInterval > 0 {
		t.sample(st.CallInterval.Seconds())
	}
}

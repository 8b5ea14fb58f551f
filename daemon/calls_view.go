package daemon

import (
	"fmt"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/probe"
)

// callsView is a server's canary calls as the pages show them: "calls 3/3
// OK", or which tool failed and why; the server page adds each tool's last
// failing response. Every string in it came from a server or a contract:
// the templates escape it.
type callsView struct {
	Total, OK int
	// Paused says why no call is made now (the server is not probed while
	// a credential it is given is empty): the counts are of calls made
	// before, and the pages say so rather than show them as today's.
	Paused   string
	Schedule string
	// Backoff says the calls are held for a rate limit or a quota, until
	// when and why; "" when they are not.
	Backoff string
	Failing []callLine // tools whose last call failed
	Tools   []callTool
}

type callLine struct {
	Tool    string
	Reason  probe.Reason
	Message string
}

type callTool struct {
	Tool string
	// Schedule is the tool's own when it is not the server's, with why.
	Schedule, Paced string
	Called          bool
	Passed          bool
	Reason          probe.Reason
	Message         string
	At              string
	Latency         string
	Calls           uint64
	Failures        uint64
	LastFailure     *callFailure
}

type callFailure struct {
	At       string
	Reason   probe.Reason
	Message  string
	Response string // what came back, as each attempt's one line
}

func newCallsView(st status.Server, schedule string) callsView {
	v := callsView{Total: len(st.Calls), Schedule: schedule}
	if last := st.Last; last != nil && last.Reason == probe.ReasonCredentialMissing {
		v.Paused = "not made while a credential is missing"
	}
	if b := st.CallsBackoff; b != nil {
		how := "doubling with each limited round"
		if b.Hinted {
			how = "as the answer said"
		}
		v.Backoff = fmt.Sprintf("held until %s (%s) for a rate limit or a quota in %s's answer: %s", b.Until.UTC().Format(time.RFC3339), how, b.Tool, b.Quote)
	}
	for _, c := range st.Calls {
		t := callTool{Tool: c.Tool, Calls: c.Calls}
		if c.Schedule != schedule {
			t.Schedule, t.Paced = c.Schedule, c.Paced
		}
		for _, n := range c.Failures {
			t.Failures += n
		}
		if last := c.Last; last != nil {
			t.Called, t.Passed, t.Reason, t.Message = true, last.Passed, last.Reason, last.Message
			t.At = last.Started.Add(last.Duration).UTC().Format(time.RFC3339)
			t.Latency = last.Duration.Round(time.Millisecond).String()
			if last.Passed {
				v.OK++
			} else {
				v.Failing = append(v.Failing, callLine{Tool: c.Tool, Reason: last.Reason, Message: last.Message})
			}
		}
		if f := c.LastFailure; f != nil {
			lf := &callFailure{At: f.Started.Add(f.Duration).UTC().Format(time.RFC3339), Reason: f.Reason, Message: f.Message}
			for _, a := range f.Attempts {
				if lf.Response != "" {
					lf.Response += "\n"
				}
				lf.Response += a.Response
			}
			t.LastFailure = lf
		}
		v.Tools = append(v.Tools, t)
	}
	return v
}

// apiBackoff is a hold on a server's calls in the JSON API.
type apiBackoff struct {
	Until  time.Time `json:"until"`
	Tool   string    `json:"tool"`
	Quote  string    `json:"quote"`
	Hinted bool      `json:"hinted"`
	Rounds int       `json:"rounds"`
}

func newAPIBackoff(b *status.Backoff) *apiBackoff {
	if b == nil {
		return nil
	}
	return &apiBackoff{Until: b.Until.UTC(), Tool: b.Tool, Quote: b.Quote, Hinted: b.Hinted, Rounds: b.Rounds}
}

// apiCall is one contracted tool in the JSON API.
type apiCall struct {
	Tool string `json:"tool"`
	// Schedule is how often it is called, and Paced why that is not the
	// server's call_schedule (a metered tool, a generated input, its
	// contract's own schedule).
	Schedule        string                  `json:"schedule,omitempty"`
	Paced           string                  `json:"paced,omitempty"`
	Passed          *bool                   `json:"passed,omitempty"` // absent until the first call
	Reason          probe.Reason            `json:"reason,omitempty"`
	Message         string                  `json:"message,omitempty"`
	LastCall        *time.Time              `json:"last_call,omitempty"`
	DurationSeconds float64                 `json:"duration_seconds,omitempty"`
	Calls           uint64                  `json:"calls"`
	Failures        map[probe.Reason]uint64 `json:"failures,omitempty"`
}

func newAPICalls(st status.Server) []apiCall {
	var out []apiCall
	for _, c := range st.Calls {
		a := apiCall{Tool: c.Tool, Schedule: c.Schedule, Paced: c.Paced, Calls: c.Calls, Failures: c.Failures}
		if last := c.Last; last != nil {
			passed, end := last.Passed, last.Started.Add(last.Duration)
			a.Passed, a.Reason, a.Message, a.LastCall, a.DurationSeconds = &passed, last.Reason, last.Message, &end, last.Duration.Seconds()
		}
		out = append(out, a)
	}
	return out
}

package preflight

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// CallReport is one contract run by check, as the JSON report and the
// receipt record it: the tool, its input (redacted), every attempt with
// what came back and each assertion's outcome.
type CallReport struct {
	Tool     string          `json:"tool"`
	Input    json.RawMessage `json:"input"`
	Passed   bool            `json:"passed"`
	Reason   string          `json:"reason,omitempty"`
	Message  string          `json:"message,omitempty"`
	Duration jsondoc.Seconds `json:"duration_seconds"`
	Attempts []CallAttempt   `json:"attempts"`
}

// CallAttempt is one tools/call of a contract.
type CallAttempt struct {
	Duration   jsondoc.Seconds       `json:"duration_seconds"`
	Answered   bool                  `json:"answered"`
	IsError    bool                  `json:"is_error,omitempty"`
	RPCCode    int                   `json:"rpc_code,omitempty"`
	HTTPStatus int                   `json:"http_status,omitempty"`
	Reason     string                `json:"reason,omitempty"`
	Response   string                `json:"response"`
	Assertions []contracts.Assertion `json:"assertions"`
	Passed     bool                  `json:"passed"`
}

func callReports(outcomes []contracts.Outcome) []CallReport {
	out := make([]CallReport, len(outcomes))
	for i, o := range outcomes {
		cr := CallReport{Tool: o.Tool, Input: o.Input, Passed: o.Passed, Reason: string(o.Reason),
			Message: o.Message, Duration: jsondoc.Seconds(o.Duration), Attempts: []CallAttempt{}}
		for _, a := range o.Attempts {
			ca := CallAttempt{Response: a.Response, Assertions: a.Assertions, Passed: a.Passed}
			if c := a.Call; c != nil {
				ca.Duration, ca.Answered, ca.IsError = jsondoc.Seconds(c.Duration), c.Answered, c.IsError
				ca.RPCCode, ca.HTTPStatus, ca.Reason = c.RPCCode, c.HTTPStatus, string(c.Reason)
			}
			cr.Attempts = append(cr.Attempts, ca)
		}
		out[i] = cr
	}
	return out
}

// Uncovered are the tools expected of s (locked, or an imported mcp-probe
// config's expectedTools) that its contracts file has no contract for:
// mcp-probe's coverage rule, which applies once a contracts file is set,
// and which --strict (--fail-on-warn) fails on. mcpwatch doctor reads it
// here, to warn of what check would fail.
func Uncovered(s config.Server) []string {
	var want []string
	switch {
	case len(s.ExpectedTools) > 0 && s.ContractsFile != "":
		want = slices.Clone(s.ExpectedTools)
	default:
		for _, c := range s.Pending {
			want = append(want, c.Tool)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	var out []string
	for _, t := range want {
		// A held contract (a tool billed from its first call) is there:
		// not calling it is the default, not a gap in coverage.
		if !slices.ContainsFunc(append(slices.Clip(s.Contracts), s.Held...), func(c contracts.Contract) bool { return c.Tool == t }) {
			out = append(out, t)
		}
	}
	return out
}

// describeCall words one finding of the canary calls.
func describeCall(f verdict.Finding, s config.Server, outcomes []contracts.Outcome) Problem {
	p := Problem{Kind: f.Kind, Fails: f.Fails, Tools: f.Tools}
	var o contracts.Outcome
	if len(f.Tools) == 1 {
		if i := slices.IndexFunc(outcomes, func(o contracts.Outcome) bool { return o.Tool == f.Tools[0] }); i >= 0 {
			o = outcomes[i]
		}
	}
	switch f.Kind {
	case verdict.KindUpstreamUnreachable:
		// The service is unreachable: no tool broke, nothing to renew.
		quote := o.Message
		if o.Upstream != nil {
			quote = sanitize.OneLine(o.Upstream.Quote)
		}
		p.Message = fmt.Sprintf("call %s: the server could not reach its service (upstream_unreachable): %s", o.Tool, quote)
		p.Details = append(p.Details, "input: "+sanitize.OneLine(string(o.Input)))
	case verdict.KindCallFailed, verdict.KindCredentialRejected:
		p.Message = fmt.Sprintf("call %s failed (%s): %s", o.Tool, o.Reason, o.Message)
		if len(o.Attempts) > 1 {
			p.Details = append(p.Details, fmt.Sprintf("%d attempts, each failed", len(o.Attempts)))
		}
		p.Details = append(p.Details, "input: "+sanitize.OneLine(string(o.Input)))
	case verdict.KindCallRetried:
		p.Message = fmt.Sprintf("call %s passed only on attempt %d of %d (--fail-on-warn fails it)", o.Tool, len(o.Attempts), len(o.Attempts))
		if first := o.Attempts[0]; len(first.Response) > 0 {
			p.Details = append(p.Details, "first attempt: "+first.Response)
		}
	case verdict.KindCallCoverage:
		var waiting, none []string
		for _, t := range f.Tools {
			if i := slices.IndexFunc(s.Pending, func(c contracts.Contract) bool { return c.Tool == t }); i >= 0 {
				waiting = append(waiting, fmt.Sprintf("%s (%s)", sanitize.Name(t), strings.Join(s.Pending[i].Placeholders, ", ")))
			} else {
				none = append(none, t)
			}
		}
		var parts []string
		if len(none) > 0 {
			parts = append(parts, fmt.Sprintf("%s expected but without a contract in %s -> %s", count(len(none), "tool", "tools"), s.ContractsFile, toolList(none)))
		}
		if len(waiting) > 0 {
			where := s.ContractsFile
			if where == "" {
				where = "its calls: in " + s.Source
			}
			parts = append(parts, fmt.Sprintf("%s not called until the \"<fill in ...>\" values of %s are filled in -> %s",
				count(len(waiting), "contract", "contracts"), where, joinAtMost(waiting, sanitize.MaxNames)))
		}
		p.Message = strings.Join(parts, "; ")
	}
	return p
}

func callDuration(c CallReport) time.Duration { return time.Duration(c.Duration) }

// joinAtMost joins the first max of items (already cut) for one line, then
// "… and N more", as sanitize.JoinNames does for bare names.
func joinAtMost(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s, %s and %d more", strings.Join(items[:max], ", "), sanitize.Ellipsis, len(items)-max)
}

package contracts

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Why a contract failed is a probe.Reason, one of Reasons (a metric
// label). A call that got no answer fails with the reason its request
// failed with, as a probe's would (timeout, canceled, tls, closed, ...);
// an answer that shows a rejected credential or an unreachable service
// fails as a probe that showed one does (probe.ReasonCredentialRejected,
// which comes before every other reason, and
// probe.ReasonUpstreamUnreachable, which comes before every other but
// excludes it: internal/credential decides both, even of a normal
// result); an answer that is a rate limit or a quota fails
// probe.ReasonRateLimited: it is not retried, and the daemon asks less
// often (see Outcome.RateLimit). The reasons below are a contract's own.
const (
	ReasonNotListed   probe.Reason = "not_listed"   // the server does not list the tool
	ReasonRefused     probe.Reason = "refused"      // mcpwatch refused to call it (annotations, opt-in)
	ReasonIsError     probe.Reason = "is_error"     // the result had isError: true
	ReasonErrorText   probe.Reason = "error_text"   // a success result that reports an error ({"error": ...})
	ReasonAssertion   probe.Reason = "assertion"    // an answer that broke an assertion of the contract
	ReasonProbeFailed probe.Reason = "probe_failed" // the probe failed before the tools could be called
)

// Reasons lists every reason a contract fails with, for bounded metrics:
// a contract's own, and every reason of a probe (probe.Reasons).
var Reasons = withProbeReasons(
	probe.ReasonCredentialRejected, probe.ReasonUpstreamUnreachable, ReasonNotListed, ReasonRefused, ReasonIsError, ReasonErrorText,
	probe.ReasonRPCError, probe.ReasonUnauthorized, probe.ReasonForbidden, probe.ReasonHTTPStatus, probe.ReasonTimeout,
	probe.ReasonConnection, probe.ReasonProtocol, ReasonAssertion, ReasonProbeFailed, probe.ReasonRateLimited,
)

// withProbeReasons is own followed by the probe's reasons it lacks.
func withProbeReasons(own ...probe.Reason) []probe.Reason {
	for _, r := range probe.Reasons {
		if !slices.Contains(own, r) {
			own = append(own, r)
		}
	}
	return own
}

// Outcome is one contract run once: every attempt, and the verdict of the
// last.
type Outcome struct {
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	Passed bool            `json:"passed"`
	Reason probe.Reason    `json:"reason,omitempty"`
	// Message is the failure in one line: the first failed assertion and
	// what came back ("status: expected success, got isError: ...").
	Message  string        `json:"message,omitempty"`
	Attempts []Attempt     `json:"attempts"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"-"` // in JSON: duration_seconds
	// Rejection is how the last attempt showed a rejected credential
	// (reason credential_rejected), with the server's words; nil otherwise.
	Rejection *credential.Rejection `json:"credential_rejection,omitempty"`
	// Upstream is how the last attempt said the server could not reach its
	// service (reason upstream_unreachable), with its words; nil otherwise.
	Upstream *credential.Upstream `json:"upstream_unreachable,omitempty"`
	// RateLimit is how the last attempt said the service limits its rate
	// or quota (reason rate_limited), with its words and when it said to
	// ask again; nil otherwise.
	RateLimit *credential.RateLimit `json:"rate_limited,omitempty"`
	// Auto is set for a call that calls: auto chose, not a contract.
	Auto bool `json:"auto,omitempty"`
}

// MarshalJSON writes Duration as duration_seconds, as every duration in
// mcpwatch's JSON is written.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type plain Outcome // without this method
	return json.Marshal(struct {
		plain
		Duration float64 `json:"duration_seconds"`
	}{plain(o), o.Duration.Seconds()})
}

// Attempt is one tools/call of a contract.
type Attempt struct {
	Call       *probe.CallResult `json:"call"`
	Response   string            `json:"response"` // what came back, one line
	Assertions []Assertion       `json:"assertions"`
	Passed     bool              `json:"passed"`
}

// Last is the final attempt's; nil when the tool was never called.
func (o Outcome) Last() *Attempt {
	if len(o.Attempts) == 0 {
		return nil
	}
	return &o.Attempts[len(o.Attempts)-1]
}

// Retried reports whether the contract needed more than one attempt.
func (o Outcome) Retried() bool { return len(o.Attempts) > 1 }

// Options bound a run of contracts.
type Options struct {
	// Timeout bounds each contract, its attempts and delays together;
	// zero: the caller's context alone.
	Timeout time.Duration
	// Retries honours each contract's retry policy (the preflight). Off,
	// every contract is called once (the daemon: its next scheduled call
	// is the retry).
	Retries bool
	// Destructive reports whether the configuration opts the tool in to
	// destructive calls.
	Destructive func(tool string) bool
	// Credentials are the credentials the server is given, by name
	// ("env:GITHUB_TOKEN"): a call that shows one rejected names them, and
	// an HTTP 401 or 403 on a call rejects them (see credential.Evidence).
	Credentials []string
	// Sleep waits between attempts; default a timer that ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Sleep == nil {
		o.Sleep = probe.Wait
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Destructive == nil {
		o.Destructive = func(string) bool { return false }
	}
	return o
}

// Permit says whether a contract's tool may be called, from the tool's
// annotations as listed. A tool annotated readOnlyHint: true may be called.
// Any other needs the contract's allowSideEffects; and one that is
// destructive (destructiveHint true, or absent, which the protocol defines
// as true) needs the configuration's opt-in as well. A tool that sends no
// annotations, or annotations that cannot be trusted (a key twice: see
// probe.Tool.Hints), is neither read-only nor known to be harmless: the
// same rules apply, with the spec's defaults. The error names the tool and
// the fix.
func Permit(t probe.Tool, c Contract, destructiveOptIn bool) error {
	n := Needs(t)
	sideEffects := n.SideEffects && !c.AllowSideEffects
	destructive := n.Destructive && !destructiveOptIn
	switch {
	case sideEffects && destructive:
		// Both at once: a refusal that revealed one opt-in per run would
		// take two runs to fix.
		return fmt.Errorf("tool %s %s, and %s; mcpwatch calls only read-only tools: if calling it is harmless, it takes both opt-ins: \"allowSideEffects\": true in its contract, and its name under allow_destructive_calls: of its server in mcpwatch.yml (or remove the contract)", c.Tool, n.Why, n.DestructiveWhy)
	case sideEffects:
		return fmt.Errorf("tool %s %s; mcpwatch calls only read-only tools: set \"allowSideEffects\": true in its contract if calling it is harmless, or remove the contract", c.Tool, n.Why)
	case destructive:
		return fmt.Errorf("tool %s %s; to call it on a schedule anyway, list it under allow_destructive_calls: of its server in mcpwatch.yml", c.Tool, n.DestructiveWhy)
	}
	return nil
}

// Run calls each contract's tool through c, one after another, and judges
// the answers. tools are what tools/list returned: a contract for a tool
// not among them is a failure (not_listed), and Permit decides the rest.
// It never calls a tool that has no contract.
func Run(ctx context.Context, c probe.Caller, tools []probe.Tool, contracts []Contract, opts Options) []Outcome {
	opts = opts.withDefaults()
	out := make([]Outcome, 0, len(contracts))
	for _, ct := range contracts {
		out = append(out, runOne(ctx, c, tools, ct, opts))
	}
	return out
}

func runOne(ctx context.Context, c probe.Caller, tools []probe.Tool, ct Contract, opts Options) (o Outcome) {
	o = Outcome{Tool: ct.Tool, Input: ct.Input, Started: opts.Now(), Attempts: []Attempt{}, Auto: ct.Auto}
	defer func() { o.Duration = opts.Now().Sub(o.Started) }()
	i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == ct.Tool })
	if i < 0 {
		o.Reason, o.Message = ReasonNotListed, fmt.Sprintf("tool %s is not listed by the server: a contract for a tool it does not offer", ct.Tool)
		return o
	}
	if err := Permit(tools[i], ct, opts.Destructive(ct.Tool)); err != nil {
		o.Reason, o.Message = ReasonRefused, "not called: "+err.Error()
		return o
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, opts.Timeout)
	}
	defer cancel()
	attempts := 1
	if opts.Retries {
		attempts = max(ct.Retry.Attempts, 1)
	}
	for n := 1; ; n++ {
		r := c.Call(cctx, ct.Tool, ct.Input)
		a := newAnswer(r)
		at := Attempt{Call: r, Response: oneLine(a.describe()), Assertions: evaluate(cctx, ct.Expect, a), Passed: true}
		read := credential.Classify(a.evidence(len(opts.Credentials) > 0))
		rejection := read.Rejection(credential.ToRenew(opts.Credentials))
		upstream := read.Upstream()
		limit := read.RateLimit()
		switch {
		case read.Kind == credential.KindRejected && !expectsCredentialRefusal(ct.Expect):
			// First, so that it is the failure a report names.
			at.Assertions = append([]Assertion{{Name: "credential", Outcome: Fail, Detail: rejection.Describe()}}, at.Assertions...)
		case read.Kind == credential.KindUnreachable:
			// Whatever the contract expects: an answer from a server that
			// could not reach its service says nothing of the tool.
			at.Assertions = append([]Assertion{{Name: "upstream", Outcome: Fail, Detail: upstream.Describe()}}, at.Assertions...)
		case read.Kind == credential.KindRateLimited:
			// Whatever the contract expects: a refusal for a rate or a
			// quota says nothing of the tool either.
			at.Assertions = append([]Assertion{{Name: "rate_limit", Outcome: Fail, Detail: limit.Describe()}}, at.Assertions...)
		}
		for i, as := range at.Assertions {
			at.Assertions[i].Detail = oneLine(as.Detail) // it quotes what the server sent
			if as.Outcome == Fail {
				at.Passed = false
			}
		}
		o.Attempts = append(o.Attempts, at)
		if at.Passed {
			o.Passed, o.Reason, o.Message, o.Rejection, o.Upstream, o.RateLimit = true, probe.ReasonNone, "", nil, nil, nil
			return o
		}
		o.Reason, o.Message = failure(at, a)
		o.Rejection, o.Upstream, o.RateLimit = nil, nil, nil
		switch o.Reason {
		case probe.ReasonCredentialRejected:
			o.Rejection = &rejection
		case probe.ReasonUpstreamUnreachable:
			o.Upstream = &upstream
		case probe.ReasonRateLimited:
			o.RateLimit = &limit
		}
		// A rate limit is asked again only where the policy names it:
		// another attempt at once would spend what is limited.
		limited := o.Reason == probe.ReasonRateLimited && len(ct.Retry.RetryOn) == 0
		if n >= attempts || limited || !retryable(ct.Retry, a) || cctx.Err() != nil {
			return o
		}
		if dl, ok := cctx.Deadline(); ok && dl.Sub(opts.Now()) <= ct.Retry.Delay {
			o.Message += fmt.Sprintf(" (no time left in the call's deadline for attempt %d of %d)", n+1, attempts)
			return o
		}
		if opts.Sleep(cctx, ct.Retry.Delay) != nil {
			return o
		}
	}
}

// failure is the reason and message of a failed attempt: its first failed
// assertion, and what the call came back with.
func failure(at Attempt, a answer) (probe.Reason, string) {
	var first Assertion
	for _, as := range at.Assertions {
		if as.Outcome == Fail {
			first = as
			break
		}
	}
	msg := oneLine(first.Name + ": " + first.Detail)
	switch first.Name {
	case "credential":
		return probe.ReasonCredentialRejected, first.Detail
	case "upstream":
		return probe.ReasonUpstreamUnreachable, first.Detail
	case "rate_limit":
		return probe.ReasonRateLimited, first.Detail
	case "status":
	default:
		return ReasonAssertion, msg
	}
	r := a.r
	switch {
	case !r.Answered:
		return r.Reason, msg
	case r.IsError:
		return ReasonIsError, msg
	case a.reportedError() != "":
		return ReasonErrorText, msg
	}
	return ReasonAssertion, msg // a call that should have been refused, and was not
}

// retryable: does a failed attempt match the policy's retryOn?
func retryable(p Retry, a answer) bool {
	if len(p.RetryOn) == 0 {
		return true
	}
	text := strings.ToLower(a.text + " " + a.r.Error)
	codes := a.codes()
	for _, c := range p.RetryOn {
		switch {
		case c.Code != 0 && slices.Contains(codes, c.Code):
			return true
		case c.Phrase == "timeout" && a.r.Reason == probe.ReasonTimeout:
			return true
		case c.Phrase != "" && strings.Contains(text, c.Phrase):
			return true
		}
	}
	return false
}

// oneLine keeps a message on one line and bounded: it goes into logs, CI
// annotations and pages. What a server sent is written escaped, never raw.
func oneLine(s string) string {
	return sanitize.Truncate(sanitize.Text(sanitize.OneLine(s)), 300)
}

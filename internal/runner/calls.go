package runner

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Canary calls: a probe that also makes a server's contracted tools/call
// requests, in the session that listed the tools, under one deadline (the
// probe's timeout plus each contract's call timeout).

// callHook is the probe's AfterList hook for s's contracts, and up to
// s.Auto calls contracts.Auto chooses from the listed tools besides; the outcomes
// land in *out, the contracts' first. A call that shows a rejected
// credential names the one to renew. Each answer is scrubbed (by the
// scrubber scrub makes once the tools are listed, with the secrets known
// then) before it is judged, as a probe's result is: what a contract
// asserts, the credential rule reads and quotes, and an outcome keeps
// never saw a secret whole, so no cut of its words can keep a part of one.
//
// A credential its issuer rejected (issuers: the answers of the probe's
// issuer checks, waited for) is not sent again in a call: each contract's
// outcome is credential_rejected, not called, quoting the issuer. A dead
// key watched at its issuer costs the service nothing more.
func callHook(s launch.Built, retries bool, given []string, scrub func() Scrubber, issuers func() []probe.IssuerCheck, out *[]contracts.Outcome) probe.AfterList {
	return func(ctx context.Context, tools []probe.Tool, c probe.Caller) {
		if rejected, ok := rejectedBy(issuers()); ok {
			*out = heldByIssuer(s, rejected, time.Now())
			return
		}
		c = scrubbing{c: c, s: scrub()}
		all := s.Contracts
		if s.Auto > 0 {
			all = append(slices.Clip(all), contracts.Auto(tools, s.Auto, func(tool string) bool {
				// A tool the catalogue says is metered is called only by
				// a contract, at its pace (config.Server.CallPlan).
				return slices.ContainsFunc(s.Contracts, func(k contracts.Contract) bool { return k.Tool == tool }) ||
					canary.Metered(s.Written.Command, s.Written.Args, s.Written.URL, tool)
			})...)
		}
		*out = contracts.Run(ctx, newSpaced(c, callGap, time.Now, probe.Wait), tools, all, contracts.Options{
			Timeout: s.CallTimeout,
			Retries: retries,
			// The catalogue's vetted canary of this server is called on
			// its word, as the configuration's opt-in would allow it.
			Destructive: func(tool string) bool {
				i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == tool })
				return s.DestructiveAllowed(tool) || (i >= 0 && canary.Vouches(s.Written.Command, s.Written.Args, s.Written.URL, tools[i]))
			},
			Credentials: given,
		})
	}
}

// callGap is the least time between the starts of two calls to one
// server, retries included: a service that allows one request a second
// (Brave Search's free plan, many others) never sees two of its canaries
// together.
const callGap = time.Second

// scrubbing is a Caller whose results come back scrubbed of the server's
// secrets.
type scrubbing struct {
	c probe.Caller
	s Scrubber
}

func (c scrubbing) Call(ctx context.Context, tool string, args json.RawMessage) *probe.CallResult {
	return c.s.Call(c.c.Call(ctx, tool, args))
}

// spaced is a Caller whose calls start at least gap apart.
type spaced struct {
	c     probe.Caller
	gap   time.Duration
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	last  time.Time
}

func newSpaced(c probe.Caller, gap time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) *spaced {
	return &spaced{c: c, gap: gap, now: now, sleep: sleep}
}

// Call waits for the gap since the last call to pass, within the call's
// context (a call whose deadline passes while it waits is made at once,
// and fails as its deadline says), then calls.
func (s *spaced) Call(ctx context.Context, tool string, args json.RawMessage) *probe.CallResult {
	if !s.last.IsZero() {
		if wait := s.last.Add(s.gap).Sub(s.now()); wait > 0 {
			_ = s.sleep(ctx, wait)
		}
	}
	s.last = s.now()
	return s.c.Call(ctx, tool, args)
}

// heldByIssuer are the outcomes of s's contracts, not called because the
// issuer of their server's credential rejected it.
func heldByIssuer(s launch.Built, c probe.IssuerCheck, now time.Time) []contracts.Outcome {
	out := make([]contracts.Outcome, len(s.Contracts))
	for i, k := range s.Contracts {
		out[i] = contracts.Outcome{
			Tool: k.Tool, Input: k.Input, Reason: probe.ReasonCredentialRejected, Started: now,
			Message:   "not called: the issuer of " + c.Credential + " rejected it (" + c.Endpoint + ")",
			Rejection: &credential.Rejection{Credential: c.Credential, Marker: "issuer", Source: "its issuer", Quote: verdict.IssuerQuote(c)},
			Attempts:  []contracts.Attempt{},
		}
	}
	return out
}

// notCalled are the outcomes of contracts whose tools could not be called
// because the probe failed before the list was read.
func notCalled(s launch.Built, res *probe.Result) []contracts.Outcome {
	reason, msg := contracts.ReasonProbeFailed, "not called: the probe failed ("+string(res.Reason)+") before the tools could be listed"
	if res.OK {
		reason, msg = probe.ReasonTimeout, "not called: the probe's deadline passed before the calls"
	}
	out := make([]contracts.Outcome, len(s.Contracts))
	for i, c := range s.Contracts {
		out[i] = contracts.Outcome{
			Tool: c.Tool, Input: c.Input, Reason: reason, Started: res.Started, Message: msg,
			Attempts: []contracts.Attempt{},
		}
	}
	return out
}

// outcomes scrubs the server's secret values from everything a call
// outcome shows: its input, what came back, every assertion's detail
// (scrubCopy: every string field).
func (s Scrubber) outcomes(in []contracts.Outcome) []contracts.Outcome {
	return scrubCopy(s, in)
}

// Call returns a scrubbed copy of a tools/call's result, as Result does
// for a probe's (mcpwatch probe --call), or c itself when there is no
// secret to look for; c is never changed.
func (s Scrubber) Call(c *probe.CallResult) *probe.CallResult {
	if len(s.patterns) == 0 {
		return c
	}
	out := scrubCopy(s, *c)
	return &out
}

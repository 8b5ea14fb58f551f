// Package verdict is the one rule that says whether a server passes: what
// a probe saw, compared with the lock, and what each finding means. The
// daemon (status page, API, logs) and the preflight (check's exit code and
// reports) both judge with it, so CI and the daemon can never disagree about
// the same observation; metrics only renders what it decided.
//
// It knows nothing of schedules, output formats or wording: a finding names
// its kind and the tools it is about, and each caller words it.
package verdict

import (
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// State is a server's verdict in one word, as the status page, the JSON API
// and the daemon's logs show it.
type State string

const (
	StatePending    State = "pending"     // not probed yet
	StateOK         State = "ok"          // probed, every locked tool present, nothing forbidden
	StateMissing    State = "missing"     // probed, some locked tools missing
	StateForbidden  State = "forbidden"   // probed, a tool matching a forbid pattern present
	StateFailed     State = "failed"      // the probe itself failed: see the reason
	StateCallFailed State = "call_failed" // listed as locked, but a canary call broke its contract
	// StateCredentialMissing: a credential the server is given expanded to
	// an empty value (an unset CI secret, an emptied token file); the
	// server was not probed.
	StateCredentialMissing State = "credential_missing" //nolint:gosec // G101: a state, not a credential
	// StateCredentialRejected: the server rejected its credential, at the
	// probe (HTTP 401/403) or in a canary call's answer (internal/credential).
	StateCredentialRejected State = "credential_rejected" //nolint:gosec // G101: a state, not a credential
	// StateUpstreamUnreachable: the server said, at the probe or in a
	// canary call's answer, that it could not reach the service it fronts
	// (internal/credential): the service is unreachable, no tool broke.
	StateUpstreamUnreachable State = "upstream_unreachable"
)

// Kind is one thing found wrong, or worth a look, on one server.
type Kind string

// Kinds, most severe first (see Severity).
const (
	KindCredentialMissing  Kind = "credential_missing"  //nolint:gosec // G101: a kind, not a credential. A credential expanded to an empty value: the server was not probed
	KindCredentialRejected Kind = "credential_rejected" //nolint:gosec // G101: a kind, not a credential. The server rejected its credential (the probe, or a canary call)
	KindConfigError        Kind = "config_error"        // the probe target could not be built (unset variable, unreadable secret file)
	KindNotConfigured      Kind = "not_configured"      // in the lock, not in the configuration
	KindProbeFailed        Kind = "probe_failed"        // the server could not be probed
	KindForbidden          Kind = "forbidden"           // a tool matching a forbid pattern is offered
	KindMissing            Kind = "missing"             // a locked tool is not offered
	KindCallFailed         Kind = "call_failed"         // a canary call broke its contract, or could not be made
	// KindUpstreamUnreachable: the server could not reach the service it
	// fronts (the probe, or a canary call, said so); never a rejection.
	KindUpstreamUnreachable Kind = "upstream_unreachable"
	KindSchemaChanged       Kind = "schema_changed"      // a locked input-schema fingerprint differs (fails when strict)
	KindDescriptionChanged  Kind = "description_changed" // a locked description hash differs (fails when strict)
	KindDuplicate           Kind = "duplicate"           // a tool name is listed more than once: only the first is compared (fails when strict)
	KindExtra               Kind = "extra"               // an offered tool is not locked (fails when strict)
	KindUnlocked            Kind = "unlocked"            // the server has no lock entry (fails when strict)
	KindCallRetried         Kind = "call_retried"        // a contract passed only after a retry (fails when strict)
	KindCallCoverage        Kind = "call_coverage"       // an expected tool has no contract in the contracts file (fails when strict)
	KindWarning             Kind = "warning"             // the probe succeeded with a remark; never fails
)

// KindOK is the verdict of a server with no failing finding.
const KindOK Kind = "ok"

// severity orders the kinds, most severe first: a server's verdict is its
// most severe failing finding.
var severity = []Kind{
	KindCredentialMissing, KindCredentialRejected, KindConfigError, KindNotConfigured, KindProbeFailed, KindForbidden, KindMissing, KindCallFailed,
	KindUpstreamUnreachable,
	KindSchemaChanged, KindDescriptionChanged, KindDuplicate, KindExtra, KindUnlocked, KindCallRetried,
	KindCallCoverage, KindWarning,
}

// Finding is one kind of thing found on one server, with the tools it is
// about (sorted, as the diff has them) and whether it fails the server.
type Finding struct {
	Kind  Kind
	Fails bool
	Tools []string
	// Credential names the credential of a finding about one (an issuer's
	// answer), without its value.
	Credential string
}

// Judge lists the findings of one probe against its diff, in the order a
// report shows them. A credential its issuer rejected fails
// (credential_rejected), whether or not the server listed its tools; an
// issuer that could not be asked is upstream_unreachable, never a
// rejection (see Issuer). A failed probe, a forbidden tool present and a
// missing locked tool always fail; a changed fingerprint, a tool name listed twice,
// an extra tool and a server without a lock entry are reported, and fail
// only when strict. A probe's
// warnings are the caller's to show: they never fail. res must not be nil.
func Judge(res *probe.Result, diff lockstore.Diff, strict bool) []Finding {
	if !res.OK {
		kind := KindProbeFailed
		switch res.Reason {
		case probe.ReasonConfig:
			kind = KindConfigError
		case probe.ReasonCredentialMissing:
			kind = KindCredentialMissing
		case probe.ReasonCredentialRejected:
			kind = KindCredentialRejected
		case probe.ReasonUpstreamUnreachable:
			kind = KindUpstreamUnreachable
		}
		return append(issuerFindings(res), Finding{Kind: kind, Fails: true, Tools: diff.Expected})
	}
	out := issuerFindings(res)
	add := func(k Kind, fails bool, tools []string) {
		out = append(out, Finding{Kind: k, Fails: fails, Tools: tools})
	}
	if len(diff.Forbidden) > 0 {
		add(KindForbidden, true, diff.Forbidden)
	}
	if len(diff.Missing) > 0 {
		add(KindMissing, true, diff.Missing)
	}
	if len(diff.SchemaChanged) > 0 {
		add(KindSchemaChanged, strict, diff.SchemaChanged)
	}
	if len(diff.DescriptionChanged) > 0 {
		add(KindDescriptionChanged, strict, diff.DescriptionChanged)
	}
	if len(diff.Duplicate) > 0 {
		add(KindDuplicate, strict, diff.Duplicate)
	}
	switch {
	case !diff.Locked:
		add(KindUnlocked, strict, diff.Extra)
	case len(diff.Extra) > 0:
		add(KindExtra, strict, diff.Extra)
	}
	return out
}

// issuerFindings are the findings of what the services that issued the
// probe's credentials said of them: a rejection fails as
// credential_rejected; a service that could not be asked is
// upstream_unreachable (a warning); any other answer is no finding.
func issuerFindings(res *probe.Result) []Finding {
	var out []Finding
	if c, ok := Issuer(res, probe.IssuerRejected); ok {
		out = append(out, Finding{Kind: KindCredentialRejected, Fails: true, Credential: c.Credential})
	}
	if c, ok := Issuer(res, probe.IssuerUnreachable); ok {
		out = append(out, Finding{Kind: KindUpstreamUnreachable, Fails: true, Credential: c.Credential})
	}
	return out
}

// Issuer is the first answer of a probe's credentials' issuers with the
// verdict v, when there is one.
func Issuer(res *probe.Result, v probe.IssuerVerdict) (probe.IssuerCheck, bool) {
	if res == nil || res.Credentials == nil {
		return probe.IssuerCheck{}, false
	}
	for _, c := range res.Credentials.Issuer {
		if c.Verdict == v {
			return c, true
		}
	}
	return probe.IssuerCheck{}, false
}

// IssuerQuote is an issuer's answer as a quote: where it was asked and
// its words ("api.github.com GET /rate_limit: HTTP 401: Bad credentials").
func IssuerQuote(c probe.IssuerCheck) string {
	words := c.Quote
	if words == "" {
		words = c.Note
	}
	return c.Endpoint + ": " + words
}

// Worst is the most severe failing kind among findings, and whether there
// is one; KindOK and false when nothing fails.
func Worst(findings []Finding) (Kind, bool) {
	worst, failed := KindOK, false
	rank := func(k Kind) int { return slices.Index(severity, k) }
	for _, f := range findings {
		if f.Fails && (!failed || rank(f.Kind) < rank(worst)) {
			worst, failed = f.Kind, true
		}
	}
	return worst, failed
}

// JudgeCalls lists the findings of a server's canary calls: each failed
// contract fails (a call that broke its contract, a contract for a tool
// not listed, one mcpwatch refused to call; a call whose answer shows a
// rejected credential, as credential_rejected; one whose server could not
// reach its service, as upstream_unreachable); one that passed only after
// a retry, and an expected tool without a contract (uncovered), are
// reported, and fail only when strict. A failed probe's calls were never
// made: the probe's own finding says why, so they add none.
func JudgeCalls(outcomes []contracts.Outcome, uncovered []string, strict bool) []Finding {
	var out []Finding
	for _, o := range outcomes {
		switch {
		case o.Reason == contracts.ReasonProbeFailed:
		case o.Reason == probe.ReasonCredentialRejected:
			out = append(out, Finding{Kind: KindCredentialRejected, Fails: true, Tools: []string{o.Tool}})
		case o.Reason == probe.ReasonUpstreamUnreachable:
			out = append(out, Finding{Kind: KindUpstreamUnreachable, Fails: true, Tools: []string{o.Tool}})
		case !o.Passed:
			out = append(out, Finding{Kind: KindCallFailed, Fails: true, Tools: []string{o.Tool}})
		case o.Retried():
			out = append(out, Finding{Kind: KindCallRetried, Fails: strict, Tools: []string{o.Tool}})
		}
	}
	if len(uncovered) > 0 {
		out = append(out, Finding{Kind: KindCallCoverage, Fails: strict, Tools: uncovered})
	}
	return out
}

// Level is how loud a state is: the colour the status page shows it in,
// and the severity of the alert it raises.
type Level string

const (
	LevelCritical Level = "critical" // an alert pages someone
	LevelWarning  Level = "warning"  // worth a look, pages no one
	LevelPending  Level = "pending"  // not judged yet
	LevelOK       Level = "ok"
)

// stateRule is one state: how loud it is and the failing kinds a server is
// judged to be in it for.
type stateRule struct {
	state State
	level Level
	kinds []Kind
}

// stateRules are the states, most severe first: the order the status page
// lists servers in. A server's state is the first whose kinds hold its
// worst failing finding (Worst); pending and ok have none. A new state is
// one row here (and its kind in Severity); the page, the API, the logs and
// the history follow.
var stateRules = []stateRule{
	{StateCredentialMissing, LevelCritical, []Kind{KindCredentialMissing}},
	{StateCredentialRejected, LevelCritical, []Kind{KindCredentialRejected}},
	{StateFailed, LevelCritical, []Kind{KindConfigError, KindProbeFailed}},
	{StateForbidden, LevelCritical, []Kind{KindForbidden}},
	{StateMissing, LevelCritical, []Kind{KindMissing}},
	{StateCallFailed, LevelCritical, []Kind{KindCallFailed}},
	// A service's outage is worth a look, and pages no one: nothing of
	// the watch's (credential, server, tool) is at fault.
	{StateUpstreamUnreachable, LevelWarning, []Kind{KindUpstreamUnreachable}},
	{StatePending, LevelPending, nil},
	{StateOK, LevelOK, nil},
}

// states lists every state, most severe first.
func states() []State {
	out := make([]State, len(stateRules))
	for i, r := range stateRules {
		out[i] = r.state
	}
	return out
}

// Rank is the place of s in States: lower is more severe. A state this
// version does not know ranks after every known one.
func (s State) Rank() int {
	if i := slices.IndexFunc(stateRules, func(r stateRule) bool { return r.state == s }); i >= 0 {
		return i
	}
	return len(stateRules)
}

// Level is how loud s is; a state this version does not know is a
// warning.
func (s State) Level() Level {
	if i := s.Rank(); i < len(stateRules) {
		return stateRules[i].level
	}
	return LevelWarning
}

// Problem reports whether s counts as a problem: anything but ok and
// pending.
func (s State) Problem() bool {
	l := s.Level()
	return l != LevelOK && l != LevelPending
}

// stateOfKind is the state of a server whose worst failing finding is k:
// ok when no row holds it (KindOK, a kind that does not fail when not
// strict).
func stateOfKind(k Kind) State {
	for _, r := range stateRules {
		if slices.Contains(r.kinds, k) {
			return r.state
		}
	}
	return StateOK
}

// Judgement is a server's verdict with what it is about: the state, and
// what the log line, the page and the history name with it. The daemon
// judges once, when it records a probe (or the lock or the contracts
// change), and keeps the judgement; everything that shows a state reads
// it.
type Judgement struct {
	State State
	// Reason is the failure reason of a failed probe.
	Reason probe.Reason
	// Missing and Forbidden are the diff's, for a server missing a locked
	// tool or offering a forbidden one.
	Missing   []string
	Forbidden []string
	// Calls are the tools whose latest canary call failed, in tool order;
	// none after a failed probe (its calls were never made).
	Calls []string
	// Credential names the credential of a credential_missing or
	// credential_rejected server ("env:GITHUB_TOKEN"; several joined), as
	// the probe or the call that showed it named it; empty when the
	// configuration names none.
	Credential string
	// Quote is the server's own words that showed a credential_rejected or
	// upstream_unreachable state: the probe's, or else the first such
	// call's (scrubbed, not yet escaped); empty in any other state. The
	// log line, the page, the API and the metrics all read this one value.
	// Equal ignores it: the same state in other words is no change.
	Quote string
}

// JudgeServer judges a server's last probe against its diff, with the
// latest outcome of each of its canary calls (not strict: what the daemon
// shows). A nil result is pending.
func JudgeServer(res *probe.Result, diff lockstore.Diff, calls []contracts.Outcome) Judgement {
	if res == nil {
		return Judgement{State: StatePending}
	}
	findings := Judge(res, diff, false)
	if res.OK {
		findings = append(findings, JudgeCalls(calls, nil, false)...)
	}
	kind, _ := Worst(findings)
	j := Judgement{State: stateOfKind(kind)}
	switch {
	case !res.OK:
		j.Reason = res.Reason
	case j.State == StateMissing, j.State == StateForbidden:
		j.Missing, j.Forbidden = diff.Missing, diff.Forbidden
	}
	for _, f := range findings {
		if f.Kind == KindCallFailed || (f.Kind == KindCredentialRejected || f.Kind == KindUpstreamUnreachable) && res.OK {
			j.Calls = append(j.Calls, f.Tools...)
		}
	}
	switch j.State {
	case StateCredentialMissing:
		j.Credential = missingCredentials(res.Credentials)
	case StateCredentialRejected:
		j.Credential, j.Quote = rejectedCredential(res, calls)
	case StateUpstreamUnreachable:
		j.Quote = unreachableQuote(res, calls)
	}
	return j
}

// missingCredentials names the credentials a probe found empty.
func missingCredentials(st *probe.CredentialStatus) string {
	if st == nil {
		return ""
	}
	var names []string
	for _, g := range st.Given {
		if !g.Present {
			names = append(names, g.Credential)
		}
	}
	return strings.Join(names, ", ")
}

// rejectedCredential names the credential a probe, else the first
// rejected canary call, else its issuer, said to renew, and quotes it: the
// server's own words first, which say what its agents meet.
func rejectedCredential(res *probe.Result, calls []contracts.Outcome) (credential, quote string) {
	if res.Credentials != nil && res.Credentials.Rejected != nil {
		return res.Credentials.Rejected.Credential, res.Credentials.Rejected.Quote
	}
	for _, o := range calls {
		if o.Reason == probe.ReasonCredentialRejected && o.Rejection != nil {
			return o.Rejection.Credential, o.Rejection.Quote
		}
	}
	if c, ok := Issuer(res, probe.IssuerRejected); ok {
		return c.Credential, IssuerQuote(c)
	}
	return "", ""
}

// unreachableQuote is the words of a probe, or else of the first canary
// call, that said the server could not reach its service.
func unreachableQuote(res *probe.Result, calls []contracts.Outcome) string {
	if res.Upstream != nil {
		return res.Upstream.Quote
	}
	if c, ok := Issuer(res, probe.IssuerUnreachable); ok {
		return "the issuer of " + c.Credential + " could not be reached: " + IssuerQuote(c)
	}
	for _, o := range calls {
		if o.Reason == probe.ReasonUpstreamUnreachable && o.Upstream != nil {
			return o.Upstream.Quote
		}
	}
	return ""
}

// Equal reports whether two judgements say the same: a change of state,
// of the failure reason, of the tools or of the credential named is a
// change.
func (j Judgement) Equal(o Judgement) bool {
	return j.State == o.State && j.Reason == o.Reason &&
		slices.Equal(j.Missing, o.Missing) && slices.Equal(j.Forbidden, o.Forbidden) &&
		slices.Equal(j.Calls, o.Calls) && j.Credential == o.Credential
}

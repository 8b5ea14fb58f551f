package verdict

import (
	"slices"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestJudgeServerState(t *testing.T) {
	ok := &probe.Result{OK: true}
	cases := []struct {
		name string
		res  *probe.Result
		diff lockstore.Diff
		want State
	}{
		{"pending", nil, lockstore.Diff{}, StatePending},
		{"failed", &probe.Result{Reason: probe.ReasonTimeout}, lockstore.Diff{Locked: true, Expected: []string{"a"}}, StateFailed},
		{"config", &probe.Result{Reason: probe.ReasonConfig}, lockstore.Diff{}, StateFailed},
		{"ok", ok, lockstore.Diff{Locked: true, Expected: []string{"a"}}, StateOK},
		{"missing", ok, lockstore.Diff{Locked: true, Missing: []string{"a"}}, StateMissing},
		{"forbidden", ok, lockstore.Diff{Locked: true, Forbidden: []string{"x"}}, StateForbidden},
		// One rule for both: a forbidden tool is worse than a missing one.
		{"forbidden and missing", ok, lockstore.Diff{Locked: true, Missing: []string{"a"}, Forbidden: []string{"x"}}, StateForbidden},
		{"extra is not a failure", ok, lockstore.Diff{Locked: true, Extra: []string{"b"}}, StateOK},
		{"unlocked is not a failure", ok, lockstore.Diff{}, StateOK},
		{"a duplicate name is not a failure", ok, lockstore.Diff{Locked: true, Duplicate: []string{"a"}}, StateOK},
	}
	for _, c := range cases {
		if got := JudgeServer(c.res, c.diff, nil).State; got != c.want {
			t.Errorf("%s: JudgeServer = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestJudgeStrict(t *testing.T) {
	ok := &probe.Result{OK: true}
	d := lockstore.Diff{Locked: true, Extra: []string{"b"}, SchemaChanged: []string{"a"}}
	if k, failed := Worst(Judge(ok, d, false)); failed || k != KindOK {
		t.Errorf("not strict: %s %v, want ok", k, failed)
	}
	if k, failed := Worst(Judge(ok, d, true)); !failed || k != KindSchemaChanged {
		t.Errorf("strict: %s %v, want schema_changed", k, failed)
	}
	failedProbe := &probe.Result{Reason: probe.ReasonConfig}
	if k, _ := Worst(Judge(failedProbe, lockstore.Diff{}, false)); k != KindConfigError {
		t.Errorf("config failure: %s", k)
	}
}

// A tool name listed twice is reported, and fails only when strict.
func TestJudgeDuplicate(t *testing.T) {
	ok := &probe.Result{OK: true}
	d := lockstore.Diff{Locked: true, Duplicate: []string{"a"}}
	if k, failed := Worst(Judge(ok, d, false)); failed || k != KindOK {
		t.Errorf("not strict: %s %v, want ok", k, failed)
	}
	if k, failed := Worst(Judge(ok, d, true)); !failed || k != KindDuplicate {
		t.Errorf("strict: %s %v, want duplicate", k, failed)
	}
}

// A canary call that broke its contract makes a listed server call_failed,
// naming the tool; a failed probe's calls were never made, and a missing
// tool is worse than a failing call.
func TestJudgeServerWithCalls(t *testing.T) {
	ok := &probe.Result{OK: true}
	locked := lockstore.Diff{Locked: true, Expected: []string{"a", "b"}}
	calls := []contracts.Outcome{
		{Tool: "a", Passed: false, Reason: contracts.ReasonIsError},
		{Tool: "b", Passed: true},
	}
	j := JudgeServer(ok, locked, calls)
	if j.State != StateCallFailed || !slices.Equal(j.Calls, []string{"a"}) {
		t.Errorf("a failing call: %+v, want call_failed naming a", j)
	}
	failed := &probe.Result{Reason: probe.ReasonTimeout}
	notCalled := []contracts.Outcome{{Tool: "a", Reason: contracts.ReasonProbeFailed}}
	if j := JudgeServer(failed, locked, notCalled); j.State != StateFailed || j.Reason != probe.ReasonTimeout || j.Calls != nil {
		t.Errorf("a failed probe: %+v, want failed with its reason and no calls", j)
	}
	missing := lockstore.Diff{Locked: true, Expected: []string{"a", "b"}, Missing: []string{"b"}}
	j = JudgeServer(ok, missing, calls)
	if j.State != StateMissing || !slices.Equal(j.Missing, []string{"b"}) || !slices.Equal(j.Calls, []string{"a"}) {
		t.Errorf("missing and a failing call: %+v, want missing, naming both", j)
	}
	if !j.Equal(JudgeServer(ok, missing, calls)) || j.Equal(JudgeServer(ok, missing, nil)) {
		t.Errorf("Equal does not tell the failing calls apart")
	}
}

// The states are listed most severe first, in the order of their kinds in
// Severity, and each has a level; a state this version does not know sorts
// last, as a warning.
func TestStateOrder(t *testing.T) {
	last := -1
	for _, r := range stateRules {
		for _, k := range r.kinds {
			i := slices.Index(severity, k)
			if i < 0 {
				t.Errorf("state %s: kind %s is not in Severity", r.state, k)
			}
			if i < last {
				t.Errorf("state %s: kind %s comes before a kind of a more severe state in Severity", r.state, k)
			}
			last = i
		}
		if r.level == "" {
			t.Errorf("state %s has no level", r.state)
		}
	}
	states := states()
	for i, s := range states {
		if s.Rank() != i {
			t.Errorf("%s ranks %d, listed %d", s, s.Rank(), i)
		}
	}
	if !slices.Equal(states[:6], []State{StateCredentialMissing, StateCredentialRejected, StateFailed, StateForbidden, StateMissing, StateCallFailed}) {
		t.Errorf("states = %v", states)
	}
	future := State("credential_expired")
	if future.Rank() != len(states) || future.Level() != LevelWarning || !future.Problem() {
		t.Errorf("an unknown state: rank %d level %s problem %t", future.Rank(), future.Level(), future.Problem())
	}
	if StateOK.Problem() || StatePending.Problem() || !StateCallFailed.Problem() || StateMissing.Level() != LevelCritical {
		t.Errorf("problems and levels are wrong")
	}
}

// A credential found empty before the probe, or rejected by the probe or by
// a canary call, is a credential state of its own, naming the credential;
// it outranks the missing tools and failing calls it causes.
func TestJudgeCredentials(t *testing.T) {
	locked := lockstore.Diff{Locked: true, Expected: []string{"a", "b"}}
	missing := &probe.Result{Reason: probe.ReasonCredentialMissing, Tools: []probe.Tool{},
		Credentials: &probe.CredentialStatus{Given: []probe.GivenCredential{{Credential: "env:A_TOKEN", Present: true}, {Credential: "env:GITHUB_TOKEN"}}}}
	j := JudgeServer(missing, locked, nil)
	if j.State != StateCredentialMissing || j.Reason != probe.ReasonCredentialMissing || j.Credential != "env:GITHUB_TOKEN" {
		t.Errorf("an empty credential: %+v", j)
	}
	if k, _ := Worst(Judge(missing, locked, false)); k != KindCredentialMissing {
		t.Errorf("kind %s", k)
	}

	refused := &probe.Result{Reason: probe.ReasonCredentialRejected, HTTPStatus: 401, Tools: []probe.Tool{},
		Credentials: &probe.CredentialStatus{Rejected: &probe.CredentialRejection{Credential: "header:Authorization", Marker: "HTTP 401"}}}
	refused.Credentials.Rejected.Quote = "HTTP 401 Unauthorized"
	if j := JudgeServer(refused, locked, nil); j.State != StateCredentialRejected || j.Credential != "header:Authorization" || j.Quote != "HTTP 401 Unauthorized" {
		t.Errorf("a probe refused: %+v", j)
	}

	ok := &probe.Result{OK: true, Tools: []probe.Tool{{Name: "a"}}}
	calls := []contracts.Outcome{
		{Tool: "a", Reason: probe.ReasonCredentialRejected, Rejection: &credential.Rejection{Credential: "env:SLACK_BOT_TOKEN", Quote: "invalid_auth"}},
		{Tool: "b", Reason: contracts.ReasonIsError},
	}
	withMissing := lockstore.Diff{Locked: true, Expected: []string{"a", "b"}, Missing: []string{"b"}}
	j = JudgeServer(ok, withMissing, calls)
	if j.State != StateCredentialRejected || j.Credential != "env:SLACK_BOT_TOKEN" || j.Quote != "invalid_auth" || !slices.Equal(j.Calls, []string{"a", "b"}) {
		t.Errorf("a call rejected: %+v, want credential_rejected naming the credential and both failing calls", j)
	}
	if f := JudgeCalls(calls, nil, false); len(f) != 2 || f[0].Kind != KindCredentialRejected || f[1].Kind != KindCallFailed {
		t.Errorf("call findings %+v", f)
	}
	if !StateCredentialMissing.Problem() || StateCredentialRejected.Level() != LevelCritical {
		t.Errorf("the credential states are not critical problems")
	}
}

// A server that said it could not reach its service, at the probe or in a
// call, is upstream_unreachable with its words: never credential_rejected,
// a warning, and after a tool that broke.
func TestJudgeUpstreamUnreachable(t *testing.T) {
	t.Parallel()
	locked := lockstore.Diff{Locked: true, Expected: []string{"a", "b"}}
	down := &probe.Result{Reason: probe.ReasonUpstreamUnreachable, Tools: []probe.Tool{},
		Upstream: &probe.UpstreamFailure{Marker: "no such host", Quote: "dial tcp: lookup slack.com: no such host"}}
	j := JudgeServer(down, locked, nil)
	if j.State != StateUpstreamUnreachable || j.Reason != probe.ReasonUpstreamUnreachable || j.Quote != down.Upstream.Quote || j.Credential != "" {
		t.Errorf("a probe: %+v", j)
	}
	ok := &probe.Result{OK: true, Tools: []probe.Tool{{Name: "a"}, {Name: "b"}}}
	calls := []contracts.Outcome{{Tool: "a", Reason: probe.ReasonUpstreamUnreachable,
		Upstream: &credential.Upstream{Marker: "fetch failed", Quote: "Error searching libraries: TypeError: fetch failed"}}}
	j = JudgeServer(ok, locked, calls)
	if j.State != StateUpstreamUnreachable || j.Quote != calls[0].Upstream.Quote || !slices.Equal(j.Calls, []string{"a"}) {
		t.Errorf("a call: %+v", j)
	}
	broken := append(calls, contracts.Outcome{Tool: "b", Reason: contracts.ReasonIsError})
	if j := JudgeServer(ok, locked, broken); j.State != StateCallFailed || j.Quote != "" {
		t.Errorf("a call that broke outranks an unreachable service: %+v", j)
	}
	if StateUpstreamUnreachable.Level() != LevelWarning || !StateUpstreamUnreachable.Problem() {
		t.Errorf("upstream_unreachable: level %s", StateUpstreamUnreachable.Level())
	}
	other := j
	other.Quote = "other words"
	if !j.Equal(other) {
		t.Error("the same state in other words is a change")
	}
}

// What a credential's issuer said judges the server whether or not it
// listed its tools: a rejection is credential_rejected, naming the
// credential and quoting where it was asked; an issuer that could not be
// asked is upstream_unreachable, never a rejection; an answer not judged
// (limited, unknown) changes nothing.
func TestJudgeIssuer(t *testing.T) {
	check := func(v probe.IssuerVerdict) *probe.CredentialStatus {
		return &probe.CredentialStatus{Issuer: []probe.IssuerCheck{{Credential: "env:GITHUB_TOKEN", Service: "github",
			Endpoint: "api.github.com GET /rate_limit", Verdict: v, Quote: "HTTP 401: Bad credentials"}}}
	}
	listed := func(st *probe.CredentialStatus) *probe.Result {
		return &probe.Result{OK: true, Tools: []probe.Tool{{Name: "a"}}, Credentials: st}
	}
	diff := lockstore.Diff{Locked: true, Expected: []string{"a"}}
	for v, want := range map[probe.IssuerVerdict]State{
		probe.IssuerAccepted:    StateOK,
		probe.IssuerRejected:    StateCredentialRejected,
		probe.IssuerUnreachable: StateUpstreamUnreachable,
		probe.IssuerLimited:     StateOK,
		probe.IssuerUnknown:     StateOK,
	} {
		j := JudgeServer(listed(check(v)), diff, nil)
		if j.State != want {
			t.Errorf("%s: state %s, want %s", v, j.State, want)
		}
		if v == probe.IssuerRejected && (j.Credential != "env:GITHUB_TOKEN" || j.Quote != "api.github.com GET /rate_limit: HTTP 401: Bad credentials") {
			t.Errorf("rejected: %+v, want the credential named and the issuer quoted", j)
		}
	}
	failed := &probe.Result{Reason: probe.ReasonExited, Error: "exited", Credentials: check(probe.IssuerRejected)}
	if j := JudgeServer(failed, diff, nil); j.State != StateCredentialRejected || j.Reason != probe.ReasonExited {
		t.Errorf("a server that exited, its credential rejected by its issuer: %+v", j)
	}
}

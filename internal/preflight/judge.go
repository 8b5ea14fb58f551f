package preflight

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// stderrLines is how many of the last lines of a failed server's stderr a
// report shows: enough for the fatal line and its context.
const stderrLines = 5

// judge compares one observation with its lock entry and lists what is
// wrong. What fails is verdict.Judge's to say (the daemon judges with the
// same rule); judge words each finding for people (wording).
//
// static are the server's problems judged from the files alone (Static):
// they are added when the probe succeeded, after the calls' findings.
func judge(obs Observation, entry lockstore.Entry, locked, strict bool, static []Problem) ServerReport {
	s := obs.Server
	res := obs.Result
	w := wording{server: s, name: sanitize.ShellQuote(s.Name), res: res}
	if res.OK {
		w.diff = lockstore.Compare(entry, locked, obs.Tools, s.Forbid)
	} else {
		// A probe that saw nothing verified none of the locked tools.
		w.diff = lockstore.Diff{Locked: locked, Expected: []string{}}
		if locked {
			w.diff.Expected = entry.Names()
		}
	}
	redacted := s.Redacted()
	sr := ServerReport{Name: s.Name, Server: &redacted, Timeout: jsondoc.Seconds(obs.Timeout), Probe: res, Diff: w.diff, Calls: calls(obs)}
	for _, f := range verdict.Judge(res, w.diff, strict) {
		sr.add(w.probe(f))
	}
	if res.OK {
		for _, f := range verdict.JudgeCalls(obs.Calls, nil, strict) {
			sr.add(describeCall(f, s, obs.Calls))
		}
		sr.Problems = append(sr.Problems, static...)
		for _, msg := range res.Warnings {
			sr.add(Problem{Kind: verdict.KindWarning, Message: msg})
		}
	}
	return sr.settle()
}

func calls(obs Observation) []CallReport {
	if obs.Calls == nil {
		return nil
	}
	return callReports(obs.Calls)
}

// wording words the findings of one server's probe for people.
type wording struct {
	server config.Server
	name   string // the server's name, quoted for a shell: what its commands say
	res    *probe.Result
	diff   lockstore.Diff
}

// probe words one finding of the probe: what a credential's issuer said,
// a probe that failed, or what a probe that succeeded found.
func (w wording) probe(f verdict.Finding) Problem {
	if p, ok := issuerProblem(f, w.res); ok {
		return p
	}
	if !w.res.OK {
		p := failedProbe(f, w.res)
		if !w.diff.Locked {
			p.Details = append(p.Details, "not locked yet: run 'mcpwatch lock --server "+w.name+"' once it answers")
		}
		return p
	}
	p := Problem{Kind: f.Kind, Fails: f.Fails, Tools: f.Tools}
	switch f.Kind {
	case verdict.KindForbidden:
		p.Message = fmt.Sprintf("%s forbidden by %s -> %s", count(len(f.Tools), "tool", "tools"), strings.Join(w.server.Forbid, ", "), toolList(f.Tools))
	case verdict.KindMissing:
		// The Python preflight's line, so a log grep written for it keeps working.
		p.Message = fmt.Sprintf("%d/%d tools missing -> %s", len(f.Tools), len(w.diff.Expected), toolList(f.Tools))
		p.Details = []string{"if they were removed on purpose, accept it with 'mcpwatch lock --server " + w.name + "' (drops them from the lock)"}
	case verdict.KindSchemaChanged:
		p.Message = fmt.Sprintf("input schema changed -> %s", toolList(f.Tools))
		p.Details = []string{"relock with 'mcpwatch lock --fingerprints --server " + w.name + "' once the change is reviewed"}
	case verdict.KindDescriptionChanged:
		p.Message = fmt.Sprintf("description changed -> %s", toolList(f.Tools))
		p.Details = []string{"read the new descriptions (mcpwatch probe) before relocking: a rewritten description can steer an agent"}
	case verdict.KindDuplicate:
		p.Message = fmt.Sprintf("%s more than once -> %s", count(len(f.Tools), "tool name listed", "tool names listed"), toolList(f.Tools))
		p.Details = []string{"only the first definition is compared with the lock; an agent may be given another one"}
	case verdict.KindUnlocked:
		p.Message = fmt.Sprintf("not locked yet (%s seen): run 'mcpwatch lock --server %s'", count(len(w.res.Tools), "tool", "tools"), w.name)
	case verdict.KindExtra:
		p.Message = fmt.Sprintf("%s not in the lock -> %s", count(len(f.Tools), "extra tool", "extra tools"), toolList(f.Tools))
		p.Details = []string{"once reviewed, lock them with 'mcpwatch lock --server " + w.name + "'"}
	default:
		p.Message = string(f.Kind)
	}
	return p
}

// issuerProblem words a finding of what a credential's issuer said: the
// credential it rejected and its words, with what to do; or that it could
// not be asked. ok is false for any other finding.
func issuerProblem(f verdict.Finding, res *probe.Result) (Problem, bool) {
	if f.Credential == "" {
		return Problem{}, false
	}
	p := Problem{Kind: f.Kind, Fails: f.Fails}
	switch f.Kind {
	case verdict.KindCredentialRejected:
		c, _ := verdict.Issuer(res, probe.IssuerRejected)
		p.Message = fmt.Sprintf("credential %s rejected by its issuer: %s (renew it; found without a tool call)", c.Credential, sanitize.OneLine(verdict.IssuerQuote(c)))
	case verdict.KindUpstreamUnreachable:
		c, _ := verdict.Issuer(res, probe.IssuerUnreachable)
		p.Message = fmt.Sprintf("the issuer of %s could not be reached (upstream_unreachable): %s", c.Credential, sanitize.OneLine(verdict.IssuerQuote(c)))
		p.Details = []string{"not a rejection; with a proxy, set HTTPS_PROXY (and SSL_CERT_FILE for its CA), or turn the check off with issuer_check: false"}
	default:
		return Problem{}, false
	}
	return p, true
}

// failedProbe describes a probe that saw nothing, and the locked tools it
// therefore could not verify.
func failedProbe(f verdict.Finding, res *probe.Result) Problem {
	expected := f.Tools
	p := Problem{Kind: f.Kind, Fails: f.Fails, Tools: expected, Message: describeFailure(res)}
	if len(expected) > 0 {
		p.Details = append(p.Details, fmt.Sprintf("%d/%d locked tools unverified -> %s", len(expected), len(expected), toolList(expected)))
	}
	if res.HTTPStatus != 0 {
		p.Details = append(p.Details, "http status "+strconv.Itoa(res.HTTPStatus))
	}
	if ch := res.Challenge; ch != nil {
		p.Details = append(p.Details, "challenge: "+ch.String())
	}
	for _, line := range sanitize.LastLines(res.StderrTail, stderrLines) {
		p.Details = append(p.Details, "| "+line)
	}
	return p
}

// describeFailure is a failed probe in one line, with its stable reason:
// "probe failed (timeout): ...", or "config error: ..." for a target that
// could not be built.
func describeFailure(res *probe.Result) string {
	switch res.Reason {
	case probe.ReasonConfig:
		return "config error: " + sanitize.OneLine(res.Error)
	case probe.ReasonCredentialMissing:
		return "credential missing: " + sanitize.OneLine(res.Error)
	case probe.ReasonCredentialRejected:
		if st := res.Credentials; st != nil && st.Rejected != nil {
			return describeRejection(st.Rejected.Credential, st.Rejected.Quote)
		}
	case probe.ReasonUpstreamUnreachable:
		if res.Upstream != nil {
			return "the server could not reach its service (upstream_unreachable): " + sanitize.OneLine(res.Upstream.Quote)
		}
	}
	return fmt.Sprintf("probe failed (%s): %s", res.Reason, sanitize.OneLine(res.Error))
}

// describeRejection is a rejected credential in one line: which one to
// renew, and the server's words.
func describeRejection(credential, quote string) string {
	if credential == "" {
		return "credential rejected: " + sanitize.OneLine(quote) + " (renew the credential the server uses)"
	}
	return fmt.Sprintf("credential %s rejected: %s (renew it)", credential, sanitize.OneLine(quote))
}

// notConfigured is a locked server the configuration no longer defines.
func notConfigured(name string, entry lockstore.Entry, configSource string) ServerReport {
	where := "the configuration"
	if configSource != "" {
		where = configSource
	}
	expected := entry.Names()
	sr := ServerReport{Name: name, Diff: lockstore.Diff{Locked: true, Expected: expected}}
	p := Problem{Kind: verdict.KindNotConfigured, Fails: true, Tools: expected,
		Message: fmt.Sprintf("in the lock but not in %s; add the server back, or relock without it ('mcpwatch lock')", where)}
	if len(expected) > 0 {
		p.Details = []string{fmt.Sprintf("%d/%d locked tools unverified -> %s", len(expected), len(expected), toolList(expected))}
	}
	sr.add(p)
	return sr.settle()
}

func (sr *ServerReport) add(p Problem) { sr.Problems = append(sr.Problems, p) }

// settle sets the verdict: the most severe failing problem, else ok, by
// the verdict package's order.
func (sr *ServerReport) settle() ServerReport {
	findings := make([]verdict.Finding, len(sr.Problems))
	for i, p := range sr.Problems {
		findings[i] = verdict.Finding{Kind: p.Kind, Fails: p.Fails}
	}
	sr.Verdict, sr.Failed = verdict.Worst(findings)
	return *sr
}

// toolList is tool names a server chose, for a message: each cut, at
// most sanitize.MaxNames of them (the report's tools lists keep them all,
// whole).
func toolList(names []string) string {
	return sanitize.JoinNames(names, ", ", sanitize.MaxNames)
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

package runner

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// credentialStatus is what is known of the target's credentials after a
// probe: the credentials it is given (all present, or it would not have
// been probed), the OAuth client's tokens, and the expiry of every header
// or env value that is a JWT (its exp, read without verifying).
func credentialStatus(target probe.Target, client *oauth.Client, given []probe.GivenCredential) *probe.CredentialStatus {
	st := &probe.CredentialStatus{}
	if client != nil {
		st = client.Status()
	}
	st.Given = given
	add := func(kind string, values map[string]string) {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if exp, ok := oauth.JWTExpiry(values[k]); ok {
				st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: kind + ":" + k, Expiry: exp})
			}
		}
	}
	add("header", target.Headers)
	add("env", target.Env)
	if !st.OAuth && len(st.Expiries) == 0 && len(st.Given) == 0 {
		return nil
	}
	return st
}

// missingMessage says which credentials are missing and why, and what to
// do; never a value.
func missingMessage(missing []probe.GivenCredential) string {
	parts := make([]string, len(missing))
	for i, m := range missing {
		parts[i] = m.Credential + " has no value (" + m.Why + ")"
	}
	return strings.Join(parts, "; ") + ": the server was not probed; set it, or write ${VAR:-} where an empty value is meant"
}

// credentialNames are the names of the credentials a server is given, as
// launch.Resolve found them (env and header values whose names say
// credential, an auth: block's secrets), sorted.
func credentialNames(given []probe.GivenCredential) []string {
	out := make([]string, len(given))
	for i, g := range given {
		out[i] = g.Credential
	}
	sort.Strings(out)
	return out
}

// rejected reads a probe with the credential rule (internal/credential):
// of a failed one, an HTTP 401 or 403 to a server given a credential, a
// JSON-RPC error, or, for a stdio server that exited, closed its output or
// never answered, the tail of its stderr (Slack's Go server says
// invalid_auth there and exits; Stripe's relay logs its 401 and never
// answers initialize); of a stdio server that listed its tools, its
// stderr too (rejectedWhileServing). A rejection makes the reason credential_rejected,
// and the credential status says which credential and quotes the server;
// a server that said it could not reach its own service is
// upstream_unreachable, with its words. res is scrubbed already, and is
// not changed: the judgement is a copy.
func rejected(res *probe.Result, given []string) *probe.Result {
	if res.OK {
		return rejectedWhileServing(res, given)
	}
	e := credential.Evidence{Given: len(given) > 0, HTTPStatus: res.HTTPStatus, Error: res.Error}
	if res.RPCCode != 0 {
		e.RPCMessage = res.Error
	}
	switch res.Reason {
	case probe.ReasonExited, probe.ReasonTimeout, probe.ReasonClosed:
		e.Stderr = res.StderrTail
	}
	o := credential.Classify(e)
	var out probe.Result
	switch o.Kind {
	case credential.KindRejected:
		out = asRejected(res, given, o)
		if e.Stderr != "" && e.RPCMessage == "" && e.HTTPStatus == 0 {
			out.Error = fmt.Sprintf("%s; its stderr says its credential was rejected: %s", res.Error, o.Quote)
		}
	case credential.KindUnreachable:
		out = asUnreachable(res, o)
		out.Error = fmt.Sprintf("%s; the server could not reach its service: %s", res.Error, o.Quote)
	default:
		return res
	}
	return &out
}

// asRejected is a copy of res failed as credential_rejected: the
// credential given to renew, and the server's words o read.
func asRejected(res *probe.Result, given []string, o credential.Outcome) probe.Result {
	out := *res
	out.OK, out.Reason = false, probe.ReasonCredentialRejected
	st := probe.CredentialStatus{}
	if res.Credentials != nil {
		st = *res.Credentials
	}
	st.Rejected = &probe.CredentialRejection{Credential: credential.ToRenew(given), Marker: o.Marker, Quote: o.Quote}
	out.Credentials = &st
	return out
}

// asUnreachable is a copy of res failed as upstream_unreachable, with the
// server's words o read.
func asUnreachable(res *probe.Result, o credential.Outcome) probe.Result {
	out := *res
	out.OK, out.Reason = false, probe.ReasonUpstreamUnreachable
	out.Upstream = &probe.UpstreamFailure{Marker: o.Marker, Quote: o.Quote}
	return out
}

// rejectedWhileServing reads the stderr of a stdio server that listed its
// tools: one that logged at start that its service refused the credential
// it was given ("API error (401): {"error": "Invalid token"}") lists every
// tool and serves on, and an agent gets nothing that works from it. Such a
// probe fails as credential_rejected, its tools kept in the result for
// people; a network failure in the same tail makes it upstream_unreachable
// instead (see credential.Classify, which reads a running server's stderr
// more strictly than a dying one's). A rejection that names a credential
// variable the server was not given ("OPENAI_API_KEY is invalid;
// summaries are off") is about another credential, and is left alone.
func rejectedWhileServing(res *probe.Result, given []string) *probe.Result {
	if res.StderrTail == "" || len(given) == 0 {
		return res
	}
	o := credential.Classify(credential.Evidence{Given: true, Stderr: res.StderrTail, Running: true})
	var out probe.Result
	switch o.Kind {
	case credential.KindRejected:
		if namesAnother(o.Quote, given) {
			return res
		}
		out = asRejected(res, given, o)
		out.Error = fmt.Sprintf("the server listed its %d tools, but its stderr says its credential was rejected: %s", len(res.Tools), o.Quote)
	case credential.KindUnreachable:
		out = asUnreachable(res, o)
		out.Error = fmt.Sprintf("the server listed its %d tools, but its stderr says it could not reach its service: %s", len(res.Tools), o.Quote)
	default:
		return res
	}
	return &out
}

// envName is a variable's name as servers name theirs: capitals, digits
// and at least one underscore (GITHUB_TOKEN).
// Compiled at its first use, as most runs read no stderr of a server that
// serves.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`) })

// codeWords are words of an error code written as a variable would be
// (AUTH_INVALID_TOKEN, TOKEN_EXPIRED): such a name is the rejection's
// code, not another credential's name.
var codeWords = []string{"INVALID", "EXPIRED", "REVOKED", "BAD", "WRONG", "MISSING", "UNAUTHORIZED", "UNAUTHENTICATED",
	"ERROR", "FAILED", "DENIED", "REQUIRED", "NOT", "NO"}

// namesAnother reports whether quote names credential variables, none of
// which the server was given (given as "env:NAME", "header:NAME", ...).
func namesAnother(quote string, given []string) bool {
	named := false
	for _, name := range envName().FindAllString(quote, 8) {
		if !secret.IsCredentialName(name) || slices.ContainsFunc(strings.Split(name, "_"), func(w string) bool { return slices.Contains(codeWords, w) }) {
			continue
		}
		named = true
		for _, g := range given {
			if _, n, _ := strings.Cut(g, ":"); n == name {
				return false
			}
		}
	}
	return named
}

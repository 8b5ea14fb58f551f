package runner

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// IssuerServer is what the issuer catalogue ties a built target's
// credentials by: where it runs or connects, and every value it is given
// (env and header values, an argument's or the URL's secrets), by name.
func IssuerServer(t probe.Target) issuer.Server {
	s := issuer.Server{Command: t.Command, Args: t.Args, URL: t.URL, Env: t.Env, Untrusted: t.PublicOnly}
	for _, k := range sortedKeys(t.Env) {
		s.Values = append(s.Values, issuer.Value{Name: "env:" + k, Value: t.Env[k]})
	}
	for _, k := range sortedKeys(t.Headers) {
		s.Values = append(s.Values, issuer.Value{Name: "header:" + k, Value: t.Headers[k]})
	}
	for _, sp := range secret.ArgSecrets(t.Args) {
		name := sp.Name
		if name == "" {
			name = strconv.Itoa(sp.Arg)
		}
		s.Values = append(s.Values, issuer.Value{Name: "arg:" + name, Value: t.Args[sp.Arg][sp.Start:sp.End]})
	}
	for _, sp := range secret.URLSecrets(t.URL) {
		s.Values = append(s.Values, issuer.Value{Name: "url:" + sp.Name, Value: t.URL[sp.Start:sp.End]})
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// askIssuers starts the checks of every credential of target the issuer
// catalogue ties to a service, with checker, bounded by ctx and timeout,
// and returns a func that waits for their answers. They run beside the
// probe: a check that is due costs the probe no time of its own, and one
// that is not is answered from the checker's last answer at once.
func askIssuers(ctx context.Context, checker *issuer.Checker, target probe.Target, timeout time.Duration) func() []probe.IssuerCheck {
	ties := issuer.Match(IssuerServer(target))
	if len(ties) == 0 {
		return func() []probe.IssuerCheck { return nil }
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	out := make([]probe.IssuerCheck, len(ties))
	var wg sync.WaitGroup
	for i, t := range ties {
		wg.Go(func() { out[i] = checker.Check(ctx, t) })
	}
	return sync.OnceValue(func() []probe.IssuerCheck {
		wg.Wait()
		cancel()
		return out
	})
}

// rejectedBy is the first of checks whose issuer rejected its credential.
func rejectedBy(checks []probe.IssuerCheck) (probe.IssuerCheck, bool) {
	for _, c := range checks {
		if c.Verdict == probe.IssuerRejected {
			return c, true
		}
	}
	return probe.IssuerCheck{}, false
}

// issuerWarnings are the remarks of the issuers' answers that fail
// nothing but want a look: a credential without a scope the server's
// tools need, an answer the catalogue does not describe.
func issuerWarnings(checks []probe.IssuerCheck) []string {
	var out []string
	for _, c := range checks {
		switch {
		case len(c.MissingScopes) > 0:
			out = append(out, fmt.Sprintf("%s lacks %s that the server's tools need, its issuer says (%s; it has: %s)",
				c.Credential, plural(len(c.MissingScopes), "scope", "scopes")+" "+strings.Join(c.MissingScopes, ", "), c.Endpoint, strings.Join(c.Scopes, ", ")))
		case c.Verdict == probe.IssuerUnknown && c.Status != 0:
			out = append(out, fmt.Sprintf("the issuer of %s gave an answer mcpwatch does not judge (%s): %s", c.Credential, c.Endpoint, c.Note))
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// withIssuers adds the issuers' answers to a probe's credential status:
// each answer, and the expiry a service told.
func withIssuers(st *probe.CredentialStatus, checks []probe.IssuerCheck) *probe.CredentialStatus {
	if len(checks) == 0 {
		return st
	}
	if st == nil {
		st = &probe.CredentialStatus{}
	}
	st.Issuer = checks
	for _, c := range checks {
		if c.Expiry != nil {
			st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: c.Credential, Expiry: *c.Expiry})
		}
	}
	return st
}

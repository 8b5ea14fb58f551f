package metrics

import (
	"maps"
	"slices"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The credential families render from the last probe's credential status:
// a server whose credentials say nothing of their expiry has no series.

func credentials(st *status.Server) (out struct {
	expiries bool
	oauth    bool
}) {
	if st.Last == nil || st.Last.Credentials == nil {
		return out
	}
	out.expiries = len(st.Last.Credentials.Expiries) > 0
	out.oauth = st.Last.Credentials.OAuth
	return out
}

func renderCredentialExpiry(t *TextWriter, st *status.Server) {
	if !credentials(st).expiries {
		return
	}
	seen := map[string]bool{}
	for _, e := range st.Last.Credentials.Expiries {
		name := labelValue(e.Credential, maxInfoLabelBytes)
		if seen[name] {
			continue // one series per credential
		}
		seen[name] = true
		t.sample(unixSeconds(e.Expiry), name)
	}
}

// renderRefreshFailures writes every reason the OAuth client counts, each
// from 0 (the client's status lists the whole bounded set), as the probe
// failures do, so increase() counts the first failure.
func renderRefreshFailures(t *TextWriter, st *status.Server) {
	if !credentials(st).oauth {
		return
	}
	counts := st.Last.Credentials.RefreshFailures
	for _, r := range slices.Sorted(maps.Keys(counts)) {
		t.sample(float64(counts[r]), r)
	}
}

func renderLastRefresh(t *TextWriter, st *status.Server) {
	if credentials(st).oauth && !st.Last.Credentials.LastRefresh.IsZero() {
		t.sample(unixSeconds(st.Last.Credentials.LastRefresh))
	}
}

// renderCredentialIssuer writes what each credential's issuer last said
// of it: 1 taken, 0 rejected; nothing for an answer not judged.
func renderCredentialIssuer(t *TextWriter, st *status.Server) {
	if st.Last == nil || st.Last.Credentials == nil {
		return
	}
	for _, c := range st.Last.Credentials.Issuer {
		switch c.Verdict {
		case probe.IssuerAccepted:
			t.sample(1, labelValue(c.Credential, maxInfoLabelBytes), c.Service)
		case probe.IssuerRejected:
			t.sample(0, labelValue(c.Credential, maxInfoLabelBytes), c.Service)
		}
	}
}

// renderCredentialPresent writes one series per credential the server is
// given, from the last probe, whether it was made or not for want of one.
func renderCredentialPresent(t *TextWriter, st *status.Server) {
	if st.Last == nil || st.Last.Credentials == nil {
		return
	}
	seen := map[string]bool{}
	for _, g := range st.Last.Credentials.Given {
		name := labelValue(g.Credential, maxInfoLabelBytes)
		if seen[name] {
			continue
		}
		seen[name] = true
		t.sample(boolValue(g.Present), name)
	}
}

// renderCredentialRejected names the credential a server rejects and
// quotes it (the judgement's quote), while the judgement says so: what
// McpCredentialRejected's summary reads.
func renderCredentialRejected(t *TextWriter, st *status.Server) {
	j := st.Judgement
	if j.State != verdict.StateCredentialRejected {
		return
	}
	t.sample(1, labelValue(j.Credential, maxToolLabelBytes), labelValue(sanitize.Text(j.Quote), maxMessageLabelBytes))
}

// renderUpstreamUnreachable quotes a server that says it cannot reach the
// service it fronts, while the judgement says so: one series for the
// probe (tool empty), or one per canary call that said it, each in its own
// words. What McpUpstreamUnreachable's summary reads.
func renderUpstreamUnreachable(t *TextWriter, st *status.Server) {
	j := st.Judgement
	if j.State != verdict.StateUpstreamUnreachable {
		return
	}
	if len(j.Calls) == 0 {
		t.sample(1, "", labelValue(sanitize.Text(j.Quote), maxMessageLabelBytes))
		return
	}
	seen := map[string]bool{}
	for _, c := range st.Calls {
		if c.Last == nil || c.Last.Upstream == nil || c.Last.Reason != probe.ReasonUpstreamUnreachable {
			continue
		}
		name := labelValue(c.Tool, maxToolLabelBytes)
		if seen[name] {
			continue
		}
		seen[name] = true
		t.sample(1, name, labelValue(sanitize.Text(c.Last.Upstream.Quote), maxMessageLabelBytes))
	}
}

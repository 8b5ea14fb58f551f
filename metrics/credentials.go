package metrics

import (
	"github.com/mcpwatch/mcpwatch/daemon/status"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
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

// renderRefreshFailures writes every known reason from 0, as the probe
// failures do, so increase() counts the first failure.
func renderRefreshFailures(t *TextWriter, st *status.Server) {
	if !credentials(st).oauth {
		return
	}
	for _, r := range oauth.FailureReasons {
		t.sample(float64(st.Last.Credentials.RefreshFailures[r]), r)
	}
}

func renderLastRefresh(t *TextWriter, st *status.Server) {
	if credentials(st).oauth && !st.Last.Credentials.LastRefresh.IsZero() {
		t.sample(unixSeconds(st.Last.Credentials.LastRefresh))
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
// quotes it, while the judgement says so: what McpCredentialRejected's
// summary reads.
func renderCredentialRejected(t *TextWriter, st *status.Server) {
	j := st.Judgement
	if j.State != verdict.StateCredentialRejected {
		return
	}
	quote := ""
	if st.Last != nil && st.Last.Credentials != nil && st.Last.Credentials.Rejected != nil {
		quote = st.Last.Credentials.Rejected.Quote
	} else {
		for _, c := range st.Calls {
			if c.Last != nil && c.Last.Rejection != nil {
				quote = c.Last.Rejection.Quote
				break
			}
		}
	}
	t.sample(1, labelValue(j.Credential, maxToolLabelBytes), labelValue(sanitize.Text(quote), maxMessageLabelBytes))
}

package metrics

import (
	"github.com/mcpwatch/mcpwatch/internal/oauth"

	"github.com/mcpwatch/mcpwatch/daemon/status"
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

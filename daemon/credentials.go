package daemon

import (
	"fmt"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe"
)

// credentialCell is the status page's "credential expires in": the
// credential that expires first, those mcpwatch renews itself (OAuth access
// tokens) only when there is no other.
type credentialCell struct {
	Name    string // e.g. header:Authorization
	In      string // "2d 3h", "expired"
	At      string // RFC 3339, for the title
	Level   string // "critical" under a day, "warning" under a week, else ""
	Renewed bool
}

func newCredentialCell(st *probe.CredentialStatus, now time.Time) *credentialCell {
	if st == nil {
		return nil
	}
	var first *probe.CredentialExpiry
	for i := range st.Expiries {
		e := &st.Expiries[i]
		switch {
		case first == nil,
			first.Renewed && !e.Renewed,
			first.Renewed == e.Renewed && e.Expiry.Before(first.Expiry):
			first = e
		}
	}
	if first == nil {
		return nil
	}
	left := first.Expiry.Sub(now)
	c := &credentialCell{Name: first.Credential, In: timeLeft(left), At: first.Expiry.UTC().Format(time.RFC3339), Renewed: first.Renewed}
	switch {
	case first.Renewed:
	case left < 24*time.Hour:
		c.Level = "critical"
	case left < 7*24*time.Hour:
		c.Level = "warning"
	}
	return c
}

// timeLeft is a time to expiry for people: "expired", "42m", "23h10m", "6d 4h".
func timeLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

// credentialProblem is the page's line for a server in a credential state:
// which credential, and what was empty or what the server said; "" in any
// other state.
func credentialProblem(st status.Server) string {
	j := st.Judgement
	switch j.State {
	case verdict.StateCredentialMissing:
		if st.Last != nil && st.Last.Credentials != nil {
			for _, g := range st.Last.Credentials.Given {
				if !g.Present {
					return g.Credential + " is empty: " + g.Why
				}
			}
		}
		return j.Credential + " is empty"
	case verdict.StateCredentialRejected:
		name := j.Credential
		if name == "" {
			name = "its credential"
		}
		if j.Quote != "" {
			return name + " rejected: " + j.Quote
		}
		return name + " rejected"
	}
	return ""
}

// upstreamProblem is the page's line for a server that said it could not
// reach the service it fronts: the service is unreachable (no tool
// broke), in the server's words; "" in any other state.
func upstreamProblem(st status.Server) string {
	j := st.Judgement
	if j.State != verdict.StateUpstreamUnreachable {
		return ""
	}
	where := "the server could not reach its service"
	if len(j.Calls) > 0 {
		where = "calls to " + sanitize.JoinNames(j.Calls, ", ", sanitize.MaxNames) + " could not reach the server's service"
	}
	if j.Quote != "" {
		return sanitize.Text(where + ": " + j.Quote)
	}
	return sanitize.Text(where)
}

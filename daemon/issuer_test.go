package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// A server that lists its tools while its credential's issuer rejects it
// is shown credential_rejected on the status page, naming the credential
// and quoting where it was asked; the server page lists every issuer
// check, its words escaped.
func TestPagesShowIssuerChecks(t *testing.T) {
	cfg := &config.Config{Defaults: config.Defaults{Schedule: "@every 1h", Timeout: 10 * time.Second},
		Servers: []config.Server{{Name: "gh", Command: "x"}}}
	cfg.Normalize()
	d, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	d.ready.Store(true)
	exp := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	res := &probe.Result{OK: true, Transport: probe.TransportStdio, Started: time.Now(), Tools: []probe.Tool{{Name: "search"}},
		Credentials: &probe.CredentialStatus{Issuer: []probe.IssuerCheck{
			{Credential: "env:GITHUB_TOKEN", Service: "github", Endpoint: "api.github.com GET /rate_limit", Verdict: probe.IssuerRejected,
				Status: 401, Quote: "HTTP 401: Bad credentials <b>\u202e"},
			{Credential: "env:GITLAB_TOKEN", Service: "gitlab", Endpoint: "gitlab.com/api/v4 GET /personal_access_tokens/self", Verdict: probe.IssuerAccepted,
				Status: 200, Expiry: &exp},
		}}}
	s, _ := d.lookup("gh")
	s.recordResult(triggerSchedule, res, []lockstore.Observed{{Name: "search"}}, nil, nil, nil)

	page, _ := indexHTML(t, d, "")
	row := between(page, `href="server/gh"`, "</tr>")
	if !strings.Contains(row, "CREDENTIAL_REJECTED") || !strings.Contains(row, "env:GITHUB_TOKEN rejected: api.github.com GET /rate_limit: HTTP 401: Bad credentials") {
		t.Errorf("the row of a credential its issuer rejected:\n%s", row)
	}
	server, _ := serverHTML(t, d, "gh")
	for _, want := range []string{
		"<dt>Checked at the issuer</dt>",
		"env:GITHUB_TOKEN -&gt; api.github.com GET /rate_limit, expiry from the response header: rejected (HTTP 401: Bad credentials &lt;b&gt;\\u202e)",
		"env:GITLAB_TOKEN -&gt; gitlab.com/api/v4 GET /personal_access_tokens/self, expiry from expires_at in the answer: accepted, expires 2027-01-02",
	} {
		if !strings.Contains(server, want) {
			t.Errorf("the server page lacks %s", want)
		}
	}
}

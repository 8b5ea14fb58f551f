package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The browser is opened at the login's own start page on loopback, which
// sends it on to the authorization server: the address an opener and a
// browser take on their command line (which any local user can read)
// holds neither the state nor the PKCE challenge, only the port and the
// start page's name; the authorization request still carries both.
func TestLoginStateOutOfTheBrowsersCommandLine(t *testing.T) {
	_, mcp := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered"})
	b := newBrowser()
	var authorize url.Values // the query of the authorization request, as the browser sent it
	b.hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, "/authorize") {
			authorize = r.URL.Query()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	lr := login(t, mcp, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: filepath.Join(t.TempDir(), "rt")}, b, 20*time.Second)
	if !lr.res.OK {
		t.Fatalf("login: %s: %s", lr.res.Reason, lr.res.Error)
	}
	if len(b.opened) != 1 {
		t.Fatalf("the browser was opened %d times", len(b.opened))
	}
	u, err := url.Parse(b.opened[0])
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || !strings.HasPrefix(u.Path, "/start/") || u.RawQuery != "" {
		t.Errorf("the browser was opened at %s, want the login's start page on loopback", u)
	}
	if authorize.Get("state") == "" || authorize.Get("code_challenge") == "" {
		t.Fatalf("the authorization request: %v", authorize)
	}
	for _, v := range []string{authorize.Get("state"), authorize.Get("code_challenge")} {
		if strings.Contains(b.opened[0], v) || strings.Contains(b.opened[0], url.QueryEscape(v)) {
			t.Errorf("the browser's address %s holds %q", b.opened[0], v)
		}
	}
	if !strings.Contains(lr.out, "state=") {
		t.Errorf("the URL printed for a person to open by hand lacks the state:\n%s", lr.out)
	}
}

// Another program that reads the start page's address (the port and
// name) and opens it first gets the authorization URL; the browser's own
// request then comes second, and the sign-in ends, so the state it stole
// answers nothing. Had the browser been first, the second request would
// end it all the same: which one was the browser cannot be told.
func TestLoginStartPageOpenedTwice(t *testing.T) {
	_, mcp := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered"})
	var stolen string
	b := newBrowser()
	open := b.open
	thief := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	browse := func(ctx context.Context, u string) error {
		resp, err := thief.Get(u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		stolen = resp.Header.Get("Location")
		return open(ctx, u)
	}
	var out strings.Builder
	cfg := oauth.Config{Server: "remote", ServerURL: mcp, Grant: oauth.GrantAuthorizationCode, ClientID: "pre-registered",
		RefreshTokenFile: filepath.Join(t.TempDir(), "rt"), Login: &oauth.Login{Browser: browse, Out: &out, Deadline: time.Now().Add(20 * time.Second)}}
	c, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 22*time.Second)
	defer cancel()
	res := probe.Run(ctx, probe.Target{URL: mcp, Auth: c}, probe.Options{})
	if !strings.Contains(stolen, "state=") {
		t.Fatalf("the first request to the start page was not sent on to the authorization URL: %q", stolen)
	}
	if res.OK || !strings.Contains(res.Error, "start page was opened twice") || !strings.Contains(res.Error, "mcpwatch login remote") {
		t.Errorf("login: ok %v, %s: %s; want it ended, saying why and what to run", res.OK, res.Reason, res.Error)
	}
	if b.statuses[0] != http.StatusGone {
		t.Errorf("the browser's request got HTTP %d, want 410", b.statuses[0])
	}
}

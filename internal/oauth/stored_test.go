package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// An authorization server that grants an access token alone (expires_in
// 120): login stores it (0600, marked as an access token) with its
// expiry; a probe in grant refresh_token then uses it as it is, reports
// its expiry as a credential mcpwatch does not renew, and once the
// injected clock passes the expiry fails credential_missing naming the
// login to run, without a request to the token endpoint.
func TestLoginAccessTokenAlone(t *testing.T) {
	as, url := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered", NoRefreshTokenOnCode: true, ExpiresIn: 120})
	file := filepath.Join(t.TempDir(), "remote.refresh")
	before := time.Now()
	lr := login(t, url, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: file}, newBrowser(), 20*time.Second)
	if !lr.res.OK {
		t.Fatalf("login with an access token alone: %s: %s", lr.res.Reason, lr.res.Error)
	}
	o := lr.client.LastLogin()
	if o == nil || !o.AccessTokenOnly || o.Expiry.Before(before.Add(110*time.Second)) || o.Expiry.After(time.Now().Add(121*time.Second)) {
		t.Fatalf("login outcome %+v: want an access token alone, expiring in about 120s", o)
	}
	if m := mode(t, file); m.Perm() != 0o600 || !m.IsRegular() {
		t.Fatalf("stored file mode %v, want a regular file of 0600", m)
	}
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(content), `"kind":"mcpwatch-access-token"`) {
		t.Fatalf("the stored file is not marked as an access token: %.80q", content)
	}
	exchanges := len(as.Requests())

	// The daemon: grant refresh_token, the file as it reads it.
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c, err := oauth.New(oauth.Config{Server: "remote", ServerURL: url, Grant: oauth.GrantRefreshToken, ClientID: "pre-registered",
		RefreshToken: strings.TrimSpace(string(content)), RefreshTokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	oauth.SetClock(c, clock)
	res := run(t, c, url, "")
	if !res.OK || len(res.Tools) == 0 {
		t.Fatalf("probe with the stored access token: %s: %s", res.Reason, res.Error)
	}
	st := c.Status()
	if len(st.Expiries) != 1 || st.Expiries[0].Credential != oauth.CredentialStoredAccessToken || st.Expiries[0].Renewed || !st.Expiries[0].Expiry.Equal(o.Expiry) {
		t.Errorf("expiries %+v, want oauth_stored_access_token at %s, not renewed", st.Expiries, o.Expiry)
	}
	if n := len(as.Requests()); n != exchanges {
		t.Errorf("the probe made %d token requests, want none: there is no refresh token to send", n-exchanges)
	}

	mu.Lock()
	now = o.Expiry.Add(time.Second)
	mu.Unlock()
	res = run(t, c, url, "")
	if res.OK || res.Reason != probe.ReasonCredentialMissing {
		t.Fatalf("after the expiry: ok=%v %s: %s, want credential_missing", res.OK, res.Reason, res.Error)
	}
	for _, w := range []string{"the access token 'mcpwatch login' stored in " + file + " expired at ", "run 'mcpwatch login remote' to sign in again"} {
		if !strings.Contains(res.Error, w) {
			t.Errorf("error lacks %q:\n%s", w, res.Error)
		}
	}
	if n := len(as.Requests()); n != exchanges {
		t.Errorf("the expired token led to %d token requests, want none", n-exchanges)
	}
	for _, s := range as.Issued() {
		if strings.Contains(res.Error, s) || strings.Contains(lr.out, s) {
			t.Error("a token appears in an output")
		}
	}
}

// A token that states no lifetime is kept without expiry; a stored token
// the server refuses is a failure that says to sign in again, not a
// refresh with the file's content.
func TestStoredAccessTokenRefused(t *testing.T) {
	as, url := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered", NoRefreshTokenOnCode: true})
	file := filepath.Join(t.TempDir(), "remote.refresh")
	stored := `{"kind":"mcpwatch-access-token","access_token":"not-a-token-the-server-issued"}`
	c, err := oauth.New(oauth.Config{Server: "remote", ServerURL: url, Grant: oauth.GrantRefreshToken, ClientID: "pre-registered",
		RefreshToken: stored, RefreshTokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); len(st.Expiries) != 0 {
		t.Errorf("expiries %+v of a token without one", st.Expiries)
	}
	res := run(t, c, url, "")
	if res.OK || res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "refused the access token 'mcpwatch login' stored in "+file) ||
		!strings.Contains(res.Error, "run 'mcpwatch login remote' to sign in again") {
		t.Fatalf("refused stored token: ok=%v %s: %s", res.OK, res.Reason, res.Error)
	}
	if n := len(as.Requests()); n != 0 {
		t.Errorf("%d token requests, want none", n)
	}
}

// Another local process calling the redirect URI first (a wrong state)
// gets an error page and does not end the sign-in: the browser's answer,
// which comes after it, still signs in.
func TestLoginIgnoresStrangerCallback(t *testing.T) {
	_, url := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered"})
	file := filepath.Join(t.TempDir(), "remote.refresh")
	b := newBrowser()
	var stranger int
	inner := b.hc
	b.hc = &http.Client{Timeout: 10 * time.Second, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if redirect := r.URL.Query().Get("redirect_uri"); redirect != "" && stranger == 0 {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, redirect+"?state=forged&code=stolen", nil) //nolint:gosec // G704: the login's own loopback redirect URI
			if err != nil {
				return nil, err
			}
			resp, err := inner.Do(req) //nolint:gosec // G704: the login's own loopback redirect URI
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			stranger = resp.StatusCode
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	lr := login(t, url, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: file}, b, 20*time.Second)
	if stranger != http.StatusBadRequest {
		t.Errorf("the stranger's request got HTTP %d, want 400", stranger)
	}
	if !lr.res.OK {
		t.Fatalf("login after a stranger's callback: %s: %s", lr.res.Reason, lr.res.Error)
	}
}

// The authorization URL is printed with every byte outside visible ASCII
// percent-encoded: an authorization endpoint with C1 controls and
// bidirectional overrides reaches the terminal as text.
func TestLoginPrintsURLEscaped(t *testing.T) {
	srv := newHostileAS(t, "/authorize\u009b31m\u202egpj.exe\u2066")
	var opened string
	b := &browser{hc: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.HasPrefix(r.URL.Path, "/start/") {
			return http.DefaultTransport.RoundTrip(r) // mcpwatch's start page, which sends it on
		}
		opened = r.URL.String()
		return nil, errors.New("not followed")
	})}}
	lr := login(t, srv.mcpURL, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: filepath.Join(t.TempDir(), "rt")}, b, 3*time.Second)
	for _, bad := range []string{"\u009b", "\u202e", "\u2066"} {
		if strings.Contains(lr.out, bad) {
			t.Errorf("login printed %q raw:\n%q", bad, lr.out)
		}
	}
	if !strings.Contains(lr.out, "/authorize%C2%9B31m%E2%80%AEgpj.exe%E2%81%A6?") {
		t.Errorf("login's output lacks the percent-encoded endpoint:\n%q", lr.out)
	}
	if u, err := url.Parse(opened); err != nil || u.Path != "/authorize\u009b31m\u202egpj.exe\u2066" {
		t.Errorf("the browser was sent to %q (%v), want the same endpoint", opened, err)
	}
}

type hostileAS struct{ mcpURL string }

// newHostileAS is an MCP server that is its own authorization server and
// publishes authorizePath as its authorization endpoint.
func newHostileAS(t *testing.T, authorizePath string) hostileAS {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + authorizePath,
			"token_endpoint": srv.URL + "/token", "code_challenge_methods_supported": []string{"S256"}, "grant_types_supported": []string{"authorization_code"}})
	})
	return hostileAS{mcpURL: srv.URL + "/mcp"}
}

// A 2025-03-26 server's metadata that names an issuer on another origin
// is refused: it would claim another authorization server's identity.
func TestLegacyIssuerOnAnotherOriginRefused(t *testing.T) {
	cfg := probetest.AuthConfig{Legacy20250326: true, ClientID: "mcpwatch-test", ClientSecret: "client-secret-value-1234"}
	as := probetest.NewAuthServer(cfg)
	kit := probetest.NewServer(probetest.Config{})
	t.Cleanup(kit.Close)
	one := httptest.NewServer(as.Mux(kit))
	t.Cleanup(one.Close)
	as.SetURL("http://127.0.0.1:1") // the issuer its metadata names
	url := one.URL + "/mcp"
	c, err := oauth.New(oauth.Config{Server: "remote", ServerURL: url, Grant: oauth.GrantClientCredentials,
		ClientID: "mcpwatch-test", ClientSecret: "client-secret-value-1234"})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, c, url, "")
	if res.OK || !strings.Contains(res.Error, "is for issuer http://127.0.0.1:1, not "+one.URL+" (RFC 8414 section 3.3)") {
		t.Errorf("probe: ok=%v %s: %s, want the issuer refused", res.OK, res.Reason, res.Error)
	}
	if n := len(as.Requests()); n != 0 {
		t.Errorf("%d token requests, want none", n)
	}
}

// A 403 insufficient_scope to a stored access token: there is no refresh
// token to ask for more with (nor, before this, any discovery), so the
// probe fails naming the scope and the login to run.
func TestStoredAccessTokenStepUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:write"`)
		http.Error(w, "Forbidden", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/mcp"
	file := filepath.Join(t.TempDir(), "remote.refresh")
	c, err := oauth.New(oauth.Config{Server: "remote", ServerURL: url, Grant: oauth.GrantRefreshToken,
		RefreshToken: `{"kind":"mcpwatch-access-token","access_token":"stored-token-1"}`, RefreshTokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, c, url, probe.TransportHTTP)
	want := `HTTP 403 insufficient_scope: the server asks for scope "mcp:write", and the access token 'mcpwatch login' stored in ` + file
	if res.OK || res.Reason != probe.ReasonForbidden || !strings.Contains(res.Error, want) || !strings.Contains(res.Error, "run 'mcpwatch login remote' again") {
		t.Fatalf("probe: ok=%v %s: %s\nwant forbidden and %q", res.OK, res.Reason, res.Error, want)
	}
}

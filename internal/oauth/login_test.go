package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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

// browser is a scripted browser: it follows the authorization URL and its
// redirects to the loopback callback, and remembers the status it ended on.
type browser struct {
	mu       sync.Mutex
	asked    int // times the browser was asked to open a URL
	opened   []string
	statuses []int
	hc       *http.Client
}

func newBrowser() *browser { return &browser{hc: &http.Client{Timeout: 10 * time.Second}} }

func (b *browser) open(ctx context.Context, u string) error {
	b.mu.Lock()
	b.asked++
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.statuses = append(b.statuses, resp.StatusCode)
	b.mu.Unlock()
	return nil
}

func (b *browser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

// loginServer is an MCP test server behind a test authorization server
// that offers the authorization code grant.
func loginServer(t *testing.T, cfg probetest.AuthConfig) (*probetest.AuthServer, string) {
	t.Helper()
	cfg.Grants = append(cfg.Grants, "authorization_code", "refresh_token")
	if cfg.AuthMethods == nil {
		cfg.AuthMethods = []string{probetest.AuthNone}
	}
	as := probetest.NewAuthServer(cfg)
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	as.SetURL(asSrv.URL)
	kit := probetest.NewServer(probetest.Config{})
	t.Cleanup(kit.Close)
	mcp := httptest.NewServer(as.Protect(kit))
	t.Cleanup(mcp.Close)
	return as, mcp.URL + "/mcp"
}

type loginRun struct {
	res    *probe.Result
	client *oauth.Client
	out    string
}

// login runs mcpwatch login's probe: a client in grant authorization_code
// that signs in through b.
func login(t *testing.T, url string, cfg oauth.Config, b *browser, timeout time.Duration) loginRun {
	t.Helper()
	return loginWith(t, url, cfg, b, timeout, probe.Options{})
}

func loginWith(t *testing.T, url string, cfg oauth.Config, b *browser, timeout time.Duration, opts probe.Options) loginRun {
	t.Helper()
	var out bytes.Buffer
	cfg.Server, cfg.ServerURL, cfg.Grant = "remote", url, oauth.GrantAuthorizationCode
	if cfg.Login == nil {
		cfg.Login = &oauth.Login{}
	}
	cfg.Login.Browser, cfg.Login.Out = b.open, &out
	// As mcpwatch login: the sign-in gives up first, the probe a little
	// later, so the sign-in's own failure is what is reported.
	cfg.Login.Deadline = time.Now().Add(timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Second)
	defer cancel()
	c, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := probe.Run(ctx, probe.Target{URL: url, Auth: c}, opts)
	return loginRun{res: res, client: c, out: out.String()}
}

// refreshProbe is the daemon after a login: grant refresh_token from the
// stored file, the client as configured (or as login kept it).
func refreshProbe(t *testing.T, url, file, clientID string) *probe.Result {
	t.Helper()
	rt, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := oauth.New(oauth.Config{Server: "remote", ServerURL: url, Grant: oauth.GrantRefreshToken, ClientID: clientID,
		RefreshToken: strings.TrimSpace(string(rt)), RefreshTokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	return run(t, c, url, "")
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// Each client identity: configured, a Client ID Metadata Document, a
// dynamically registered client. Each login stores a refresh token (0600),
// asks with PKCE S256, the resource and offline_access where supported, and
// a probe in grant refresh_token succeeds with what it stored.
func TestLoginClientIdentities(t *testing.T) {
	doc := httptest.NewTLSServer(nil)
	t.Cleanup(doc.Close)
	docURL := doc.URL + "/oauth/client.json"
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "mcpwatch", "redirect_uris": []string{"http://127.0.0.1/callback"},
			"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
		})
	})

	for _, tc := range []struct {
		name     string
		as       probetest.AuthConfig
		client   oauth.Config
		by       string
		clientID func(as *probetest.AuthServer) string // as the token requests name it; "" any
	}{
		{name: "configured client", as: probetest.AuthConfig{ClientID: "pre-registered", ScopesSupported: []string{"mcp:read", "offline_access"}},
			client: oauth.Config{ClientID: "pre-registered"}, by: oauth.ConfiguredClient},
		{name: "client ID metadata document", as: probetest.AuthConfig{CIMD: true, Registration: true, CIMDClient: doc.Client()},
			client: oauth.Config{Login: &oauth.Login{ClientMetadataURL: docURL}}, by: oauth.RegisteredByMetadataDocument},
		{name: "dynamic client registration", as: probetest.AuthConfig{Registration: true, RequiredScope: "mcp:read"},
			by: oauth.RegisteredDynamically},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, url := loginServer(t, tc.as)
			file := filepath.Join(t.TempDir(), "remote.refresh")
			tc.client.RefreshTokenFile = file
			b := newBrowser()
			lr := login(t, url, tc.client, b, 20*time.Second)
			if !lr.res.OK {
				t.Fatalf("login probe failed: %s: %s\n%s", lr.res.Reason, lr.res.Error, lr.out)
			}
			o := lr.client.LastLogin()
			if o == nil || o.ClientBy != tc.by || o.RefreshTokenFile != file {
				t.Fatalf("login outcome = %+v, want a client %s", o, tc.by)
			}
			if m := mode(t, file); m.Perm() != 0o600 || !m.IsRegular() {
				t.Errorf("refresh token file mode %v, want a regular 0600 file", m)
			}
			if !strings.Contains(lr.out, "Sign in to remote in a browser") || b.count() != 1 {
				t.Errorf("browser opened %d times; printed:\n%s", b.count(), lr.out)
			}
			ar := as.AuthorizationRequests()
			if len(ar) != 1 || ar[0].CodeChallengeMethod != "S256" || ar[0].Resource != url || ar[0].Err != "" {
				t.Errorf("authorization requests = %+v, want one with S256 and resource %s", ar, url)
			}
			if tc.name == "configured client" && ar[0].Scope != "mcp:read offline_access" {
				t.Errorf("scope = %q, want scopes_supported with offline_access", ar[0].Scope)
			}
			if tc.name == "dynamic client registration" && ar[0].Scope != "mcp:read" {
				t.Errorf("scope = %q, want the challenge's, and no offline_access the server does not list", ar[0].Scope)
			}
			reg := oauth.RegistrationFile(file)
			if tc.by == oauth.ConfiguredClient {
				if _, err := os.Stat(reg); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a configured client left a registration file: %v", err)
				}
			} else {
				if m := mode(t, reg); m.Perm() != 0o600 {
					t.Errorf("registration file mode %v, want 0600", m)
				}
				if o.RegistrationFile != reg {
					t.Errorf("outcome names registration file %q, want %q", o.RegistrationFile, reg)
				}
			}
			// The daemon: grant refresh_token with what login stored.
			if res := refreshProbe(t, url, file, tc.client.ClientID); !res.OK {
				t.Fatalf("probe with the stored refresh token: %s: %s", res.Reason, res.Error)
			}
			last := as.Requests()[len(as.Requests())-1]
			if last.Grant != "refresh_token" || last.Err != "" {
				t.Errorf("last token request = %+v, want a refresh", last)
			}
			noSecrets(t, as, lr.res, lr.out)
		})
	}
}

// A second login reuses the client registered by the first (on the same
// port, as it was registered), and the daemon refreshes as that client.
func TestLoginReusesTheRegisteredClient(t *testing.T) {
	as, url := loginServer(t, probetest.AuthConfig{Registration: true})
	file := filepath.Join(t.TempDir(), "remote.refresh")
	for i := range 2 {
		lr := login(t, url, oauth.Config{RefreshTokenFile: file}, newBrowser(), 20*time.Second)
		if !lr.res.OK {
			t.Fatalf("login %d: %s", i, lr.res.Error)
		}
		if o := lr.client.LastLogin(); o.Reused != (i == 1) {
			t.Errorf("login %d: reused = %v", i, o.Reused)
		}
	}
	if n := as.Registrations(); n != 1 {
		t.Errorf("registrations = %d, want 1 (the second login reuses it)", n)
	}
}

// Denied consent, a forged state, a missing iss, no PKCE, and no answer at all: each fails naming the step and the fix,
// and stores nothing.
func TestLoginFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		as     probetest.AuthConfig
		reason probe.Reason
		want   []string
		// timeout of the login; the browser does nothing when noBrowser
		timeout   time.Duration
		noBrowser bool
	}{
		{name: "denied", as: probetest.AuthConfig{Consent: probetest.ConsentDeny}, reason: probe.ReasonUnauthorized,
			want: []string{"login, authorization: consent was denied in the browser", "access_denied", "run 'mcpwatch login remote' again and allow access"}},
		// An answer with another state is ignored: the sign-in waits on
		// for its own, which never comes here.
		{name: "wrong state", as: probetest.AuthConfig{Consent: probetest.ConsentWrongState}, reason: probe.ReasonTimeout, timeout: 3 * time.Second,
			want: []string{"login, authorization: no answer came back", "requests to the redirect URI with another state than this sign-in's were ignored: 1"}},
		{name: "no iss although promised", as: probetest.AuthConfig{NoIssInAnswer: true}, reason: probe.ReasonUnauthorized,
			want: []string{"login, authorization: the answer carries no iss", "authorization_response_iss_parameter_supported", "mix-up", "open only the URL it prints"}},
		{name: "no PKCE", as: probetest.AuthConfig{NoPKCE: true}, reason: probe.ReasonUnauthorized,
			want: []string{"code_challenge_methods_supported", "without PKCE"}},
		{name: "wrong redirect: the server shows an error page, and nothing comes back", as: probetest.AuthConfig{RedirectURIs: []string{"http://127.0.0.1/elsewhere"}},
			reason: probe.ReasonTimeout, timeout: 3 * time.Second,
			want: []string{"login, authorization: no answer came back to the redirect URI http://127.0.0.1:", "does not accept that redirect URI", "register http://127.0.0.1/callback", "--redirect-port"}},
		{name: "no browser, nobody signs in", reason: probe.ReasonTimeout, timeout: 3 * time.Second, noBrowser: true,
			want: []string{"no answer came back", "allow more time with --timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.as.ClientID = "pre-registered"
			as, url := loginServer(t, tc.as)
			file := filepath.Join(t.TempDir(), "remote.refresh")
			b := newBrowser()
			if tc.noBrowser {
				b.hc = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("no browser here") })}
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			lr := login(t, url, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: file}, b, timeout)
			if lr.res.OK || lr.res.Reason != tc.reason {
				t.Fatalf("login: ok=%v %s: %s, want %s", lr.res.OK, lr.res.Reason, lr.res.Error, tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(lr.res.Error, w) {
					t.Errorf("error lacks %q:\n%s", w, lr.res.Error)
				}
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed login stored a refresh token: %v", err)
			}
			noSecrets(t, as, lr.res, lr.out)
		})
	}
}

// A person takes longer than era detection's first request may: the
// sign-in its 401 starts lasts until the login's deadline, not that
// request's, and the probe goes on (in the era it then settles).
func TestLoginOutlastsTheRequestThatNeededIt(t *testing.T) {
	as, url := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered"})
	b := newBrowser()
	slow := b.hc.Transport
	if slow == nil {
		slow = http.DefaultTransport
	}
	b.hc = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.Contains(r.URL.Path, "/authorize") {
			// The person reads the consent page: longer than the
			// discover request's sub-deadline (50 ms) by far.
			time.Sleep(500 * time.Millisecond)
		}
		return slow.RoundTrip(r)
	})}
	lr := loginWith(t, url, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: filepath.Join(t.TempDir(), "rt")}, b, 20*time.Second,
		probe.Options{DiscoverTimeout: 50 * time.Millisecond})
	if !lr.res.OK || lr.client.LastLogin() == nil {
		t.Fatalf("login: %s: %s", lr.res.Reason, lr.res.Error)
	}
	if n := len(as.AuthorizationRequests()); n != 1 || b.asked != 1 {
		t.Errorf("browser asked %d times, %d authorization requests; want one sign-in", b.asked, n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A 403 insufficient_scope after login gets one step-up: a second sign-in
// with the challenge's scope added.
func TestLoginStepUp(t *testing.T) {
	as, url := loginServer(t, probetest.AuthConfig{ClientID: "pre-registered", RequiredScope: "mcp:read", StepUpScope: "mcp:tools"})
	b := newBrowser()
	lr := login(t, url, oauth.Config{ClientID: "pre-registered", RefreshTokenFile: filepath.Join(t.TempDir(), "rt")}, b, 20*time.Second)
	if !lr.res.OK {
		t.Fatalf("login: %s: %s", lr.res.Reason, lr.res.Error)
	}
	ar := as.AuthorizationRequests()
	if b.count() != 2 || len(ar) != 2 || ar[0].Scope != "mcp:read" || ar[1].Scope != "mcp:read mcp:tools" {
		t.Errorf("sign-ins %d, authorization requests %+v; want mcp:read, then the step-up", b.count(), ar)
	}
}

// The Client ID Metadata Document in docs/ names itself by the URL it is
// published at, and lists the loopback redirect URI login uses.
func TestPublishedClientMetadataDocument(t *testing.T) {
	b, err := os.ReadFile("../../docs/oauth-client-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		ClientName   string   `json:"client_name"`
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ClientID != oauth.DefaultClientMetadataURL || doc.ClientName == "" || doc.AuthMethod != "none" ||
		len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != "http://127.0.0.1/callback" {
		t.Errorf("docs/oauth-client-metadata.json = %+v; want client_id %s, a public client, redirect URI http://127.0.0.1/callback", doc, oauth.DefaultClientMetadataURL)
	}
}

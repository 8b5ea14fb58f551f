package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const (
	clientID     = "mcpwatch-test"
	clientSecret = "client-secret-value-1234"
)

// setup serves an MCP test server protected by a test authorization
// server: apart (the authorization server on its own origin), or on one
// origin for the 2025-03-26 layouts. It returns the MCP URL.
func setup(t *testing.T, cfg probetest.AuthConfig, kit probetest.Config, sse bool) (*probetest.AuthServer, string) {
	t.Helper()
	if cfg.ClientID == "" {
		cfg.ClientID, cfg.ClientSecret = clientID, clientSecret
	}
	as := probetest.NewAuthServer(cfg)
	srv := probetest.NewServer(kit)
	var mcp http.Handler = srv
	if sse {
		mcp = srv.SSE()
	}
	t.Cleanup(srv.Close)
	if cfg.Legacy20250326 {
		one := httptest.NewServer(as.Mux(mcp))
		t.Cleanup(one.Close)
		as.SetURL(one.URL)
		return as, one.URL + "/mcp"
	}
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	as.SetURL(asSrv.URL)
	mcpSrv := httptest.NewServer(as.Protect(mcp))
	t.Cleanup(mcpSrv.Close)
	return as, mcpSrv.URL + "/mcp"
}

func run(t *testing.T, c *oauth.Client, url string, transport probe.Transport) *probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return probe.Run(ctx, probe.Target{URL: url, Transport: transport, Auth: c}, probe.Options{})
}

func newClient(t *testing.T, cfg oauth.Config) *oauth.Client {
	t.Helper()
	if cfg.Grant == "" {
		cfg.Grant = oauth.GrantClientCredentials
	}
	if cfg.ClientID == "" {
		cfg.ClientID = clientID
	}
	if cfg.ClientSecret == "" && cfg.PrivateKeyFile == "" && cfg.Grant == oauth.GrantClientCredentials {
		cfg.ClientSecret = clientSecret
	}
	cfg.Server = "remote"
	c, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noSecrets fails when any token the authorization server issued, or the
// client secret, appears in what a probe returns.
func noSecrets(t *testing.T, as *probetest.AuthServer, outputs ...any) {
	t.Helper()
	for _, out := range outputs {
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range append(as.Issued(), clientSecret) {
			if strings.Contains(string(b), secret) {
				t.Errorf("a secret appears in the output: %s", b)
			}
		}
	}
}

func TestDiscoveryAndClientAuth(t *testing.T) {
	tests := []struct {
		name      string
		cfg       probetest.AuthConfig
		client    oauth.Config
		sse       bool
		method    string
		scope     string
		metadata  string // a well-known path the client must have read
		transport probe.Transport
	}{
		{
			name:     "RFC 8414 metadata, path-inserted; resource_metadata in the challenge; basic; scope from the challenge",
			cfg:      probetest.AuthConfig{IssuerPath: "/tenant1", RequiredScope: "mcp:read", ScopesSupported: []string{"mcp:read", "mcp:admin"}},
			method:   probetest.AuthBasic,
			scope:    "mcp:read",
			metadata: "/.well-known/oauth-authorization-server/tenant1",
		},
		{
			name: "OpenID Connect metadata; resource metadata only at its well-known URL; post; scopes_supported",
			cfg: probetest.AuthConfig{Metadata: probetest.MetadataOIDC, AuthMethods: []string{probetest.AuthPost},
				NoResourceMetadataInChallenge: true, NoChallengeScope: true, ScopesSupported: []string{"mcp:read"}, RequiredScope: "mcp:read"},
			method:   probetest.AuthPost,
			scope:    "mcp:read",
			metadata: "/.well-known/openid-configuration",
		},
		{
			name:      "OpenID Connect metadata under an issuer path, over legacy SSE",
			cfg:       probetest.AuthConfig{Metadata: probetest.MetadataOIDC, IssuerPath: "/realms/x"},
			sse:       true,
			method:    probetest.AuthBasic,
			metadata:  "/.well-known/openid-configuration/realms/x",
			transport: probe.TransportSSE,
		},
		{
			name:     "2025-03-26: no resource metadata, the server's origin publishes RFC 8414 metadata",
			cfg:      probetest.AuthConfig{Legacy20250326: true},
			method:   probetest.AuthBasic,
			metadata: "/.well-known/oauth-authorization-server",
		},
		{
			name:     "2025-03-26: the origin's metadata names an issuer under a path of the same origin",
			cfg:      probetest.AuthConfig{Legacy20250326: true, IssuerPath: "/oauth", MetadataAtRoot: true},
			method:   probetest.AuthBasic,
			metadata: "/.well-known/oauth-authorization-server",
		},
		{
			name:   "2025-03-26: no metadata at all, the default /token endpoint",
			cfg:    probetest.AuthConfig{Legacy20250326: true, Metadata: probetest.MetadataNone},
			method: probetest.AuthBasic,
		},
		{
			name:   "configured scopes and auth method win",
			cfg:    probetest.AuthConfig{AuthMethods: []string{probetest.AuthBasic, probetest.AuthPost}, RequiredScope: "a"},
			client: oauth.Config{AuthMethod: oauth.AuthClientSecretPost, Scopes: []string{"a", "b"}},
			method: probetest.AuthPost,
			scope:  "a b",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			as, url := setup(t, tc.cfg, probetest.Config{}, tc.sse)
			tc.client.ServerURL = url
			c := newClient(t, tc.client)
			res := run(t, c, url, tc.transport)
			if !res.OK {
				t.Fatalf("probe failed: %s: %s", res.Reason, res.Error)
			}
			reqs := as.Requests()
			if len(reqs) != 1 {
				t.Fatalf("token requests = %+v, want 1", reqs)
			}
			r := reqs[0]
			if r.AuthMethod != tc.method || r.Scope != tc.scope || r.Grant != "client_credentials" {
				t.Errorf("token request = %+v, want method %s scope %q", r, tc.method, tc.scope)
			}
			if !strings.HasPrefix(url, r.Resource) || r.Resource == "" {
				t.Errorf("resource = %q, want the server's URL %s or a parent", r.Resource, url)
			}
			if tc.metadata != "" && as.MetadataRequests(tc.metadata) == 0 {
				t.Errorf("metadata at %s was never read", tc.metadata)
			}

			// The token is cached: a second probe asks for none.
			res2 := run(t, c, url, tc.transport)
			if !res2.OK || len(as.Requests()) != 1 {
				t.Errorf("second probe: ok=%v, token requests %d, want cached", res2.OK, len(as.Requests()))
			}
			st := c.Status()
			if len(st.Expiries) != 1 || st.Expiries[0].Credential != oauth.CredentialAccessToken || time.Until(st.Expiries[0].Expiry) < 50*time.Minute {
				t.Errorf("status = %+v, want the access token's expiry an hour out", st)
			}
			noSecrets(t, as, res, res2, st)
		})
	}
}

func TestShortLivedTokenRenewedBeforeExpiry(t *testing.T) {
	// A token that expires inside the renewal margin is never reused.
	as, url := setup(t, probetest.AuthConfig{ExpiresIn: 5}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url})
	for i := range 2 {
		if res := run(t, c, url, ""); !res.OK {
			t.Fatalf("probe %d: %s", i, res.Error)
		}
	}
	if n := len(as.Requests()); n != 2 {
		t.Errorf("token requests = %d, want 2 (one per probe)", n)
	}
}

func TestPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	as, url := setup(t, probetest.AuthConfig{AuthMethods: []string{probetest.AuthPrivateKeyJWT}, ClientKey: &key.PublicKey}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url, PrivateKey: keyPEM, PrivateKeyFile: "key.pem", KeyID: "k1"})
	res := run(t, c, url, "")
	if !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	if r := as.Requests(); len(r) != 1 || r[0].AuthMethod != probetest.AuthPrivateKeyJWT {
		t.Errorf("token requests = %+v, want one by private_key_jwt", r)
	}
	if aud := as.AssertionAudiences(); len(aud) != 1 || aud[0] != as.Issuer() {
		t.Errorf("assertion audiences = %q, want the issuer %s, not the token endpoint", aud, as.Issuer())
	}

	// The audience stays the issuer when token_url skips discovery of the
	// token endpoint (discovery still finds the issuer), and in the
	// 2025-03-26 layout (no metadata: the server's origin is the issuer).
	for name, tc := range map[string]struct {
		cfg      probetest.AuthConfig
		tokenURL func(as *probetest.AuthServer, url string) string
	}{
		"token_url configured":    {cfg: probetest.AuthConfig{IssuerPath: "/tenant1"}, tokenURL: func(as *probetest.AuthServer, _ string) string { return as.TokenEndpoint() }},
		"2025-03-26, no metadata": {cfg: probetest.AuthConfig{Legacy20250326: true, Metadata: probetest.MetadataNone}},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.AuthMethods, tc.cfg.ClientKey = []string{probetest.AuthPrivateKeyJWT}, &key.PublicKey
			as, url := setup(t, tc.cfg, probetest.Config{}, false)
			cfg := oauth.Config{ServerURL: url, PrivateKey: keyPEM, PrivateKeyFile: "key.pem"}
			if tc.tokenURL != nil {
				cfg.TokenURL = tc.tokenURL(as, url)
			}
			if res := run(t, newClient(t, cfg), url, ""); !res.OK {
				t.Fatalf("probe failed: %s", res.Error)
			}
			if aud := as.AssertionAudiences(); len(aud) != 1 || aud[0] != as.Issuer() {
				t.Errorf("assertion audiences = %q, want the issuer %s", aud, as.Issuer())
			}
		})
	}

	// A key the server does not know: invalid_client, named.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ = x509.MarshalPKCS8PrivateKey(other)
	c = newClient(t, oauth.Config{ServerURL: url, PrivateKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), PrivateKeyFile: "other.pem"})
	res = run(t, c, url, "")
	if res.OK || res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "token endpoint") || !strings.Contains(res.Error, "invalid_client") {
		t.Errorf("wrong key: %s: %s", res.Reason, res.Error)
	}
	if n := c.Status().RefreshFailures[oauth.FailInvalidClient]; n != 1 {
		t.Errorf("invalid_client failures = %d, want 1", n)
	}
}

func TestRefreshTokenRotationWrittenBack(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "refresh-token")
	if err := os.WriteFile(file, []byte("rt-initial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	as, url := setup(t, probetest.AuthConfig{AuthMethods: []string{probetest.AuthNone}, RefreshToken: "rt-initial", Rotate: true, RefreshExpiresIn: 30 * 86400}, probetest.Config{}, false)
	cfg := oauth.Config{ServerURL: url, Grant: oauth.GrantRefreshToken, RefreshToken: "rt-initial", RefreshTokenFile: file}
	var cache oauth.Cache
	cfg.Server, cfg.ClientID = "remote", clientID
	first, err := cache.Client(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, first, url, "")
	if !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rotated := strings.TrimSpace(string(data))
	if rotated == "rt-initial" || !as.RefreshTokenValid(rotated) {
		t.Fatalf("the file holds %q, not the rotated refresh token", rotated)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if as.RefreshTokenValid("rt-initial") {
		t.Fatal("the old refresh token is still valid: rotation did not happen")
	}

	// The next probe reads the rotated token from the file: the same
	// client, its access token cached, the refresh token's expiry kept.
	cfg.RefreshToken = rotated
	again, err := cache.Client(cfg)
	if err != nil || again != first {
		t.Fatalf("the cache made a new client (%v)", err)
	}
	if res := run(t, again, url, ""); !res.OK || len(as.Requests()) != 1 {
		t.Errorf("second probe: ok=%v, %d token requests, want the cached token", res.OK, len(as.Requests()))
	}
	if exp := again.Status().Expiries; len(exp) != 2 || exp[1].Credential != oauth.CredentialRefreshToken {
		t.Errorf("expiries after the file was read again = %+v, want the refresh token's kept", exp)
	}

	// A restart: a new client, reading the file anew, refreshes with it.
	c := newClient(t, cfg)
	if res := run(t, c, url, ""); !res.OK {
		t.Fatalf("after a restart: %s", res.Error)
	}
	st := c.Status()
	var refreshExp time.Time
	for _, e := range st.Expiries {
		if e.Credential == oauth.CredentialRefreshToken {
			refreshExp = e.Expiry
		}
	}
	if d := time.Until(refreshExp); d < 29*24*time.Hour || d > 31*24*time.Hour {
		t.Errorf("refresh token expiry in %v, want the stated 30 days", d)
	}
	if st.LastRefresh.IsZero() {
		t.Error("no last refresh")
	}

	// Expired (revoked) grant: invalid_grant, the file named, counted.
	as.RevokeRefreshTokens()
	c2 := newClient(t, oauth.Config{ServerURL: url, Grant: oauth.GrantRefreshToken, RefreshToken: "rt-gone", RefreshTokenFile: file})
	res = run(t, c2, url, "")
	if res.OK || res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "invalid_grant") || !strings.Contains(res.Error, file) {
		t.Errorf("expired refresh token: %s: %s", res.Reason, res.Error)
	}
	if n := c2.Status().RefreshFailures[oauth.FailInvalidGrant]; n != 1 {
		t.Errorf("invalid_grant failures = %d, want 1", n)
	}
	noSecrets(t, as, res, st)
}

func TestStepUpOnce(t *testing.T) {
	as, url := setup(t, probetest.AuthConfig{RequiredScope: "mcp:read", StepUpScope: "mcp:tools"}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url})
	res := run(t, c, url, "")
	if !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	reqs := as.Requests()
	if len(reqs) != 2 || reqs[0].Scope != "mcp:read" || reqs[1].Scope != "mcp:read mcp:tools" {
		t.Errorf("token requests = %+v, want mcp:read then the step-up to mcp:read mcp:tools", reqs)
	}

	// A server that never grants the scope: one step-up, then a forbidden
	// failure naming the scope, and no loop.
	as, url = setup(t, probetest.AuthConfig{RequiredScope: "mcp:read", StepUpScope: "mcp:tools", NeverGrant: true}, probetest.Config{}, false)
	c = newClient(t, oauth.Config{ServerURL: url})
	res = run(t, c, url, "")
	if res.OK || res.Reason != probe.ReasonForbidden || !strings.Contains(res.Error, `scope "mcp:read mcp:tools"`) || !strings.Contains(res.Error, "insufficient_scope") {
		t.Errorf("never granted: %s: %s", res.Reason, res.Error)
	}
	if n := len(as.Requests()); n != 2 {
		t.Errorf("token requests = %d, want 2 (the token, one step-up)", n)
	}
	// The next probe does not step up again for a scope already refused.
	run(t, c, url, "")
	if n := len(as.Requests()); n != 2 {
		t.Errorf("token requests after a second probe = %d, want still 2", n)
	}
}

func TestFailuresNameTheStep(t *testing.T) {
	t.Run("authorization code only", func(t *testing.T) {
		_, url := setup(t, probetest.AuthConfig{Grants: []string{"authorization_code"}}, probetest.Config{}, false)
		res := run(t, newClient(t, oauth.Config{ServerURL: url}), url, "")
		if res.Reason != probe.ReasonConfig || !strings.Contains(res.Error, "mcpwatch login remote") || !strings.Contains(res.Error, "grant: refresh_token") {
			t.Errorf("%s: %s", res.Reason, res.Error)
		}
	})
	t.Run("discovery", func(t *testing.T) {
		// The challenge names resource metadata that is not there.
		mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/nowhere"`)
			http.Error(w, "no", http.StatusUnauthorized)
		}))
		defer mcp.Close()
		c := newClient(t, oauth.Config{ServerURL: mcp.URL + "/mcp"})
		res := run(t, c, mcp.URL+"/mcp", probe.TransportHTTP)
		if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "OAuth discovery") || !strings.Contains(res.Error, "/nowhere") {
			t.Errorf("%s: %s", res.Reason, res.Error)
		}
		if c.Status().RefreshFailures[oauth.FailDiscovery] != 1 {
			t.Errorf("discovery failures = %v", c.Status().RefreshFailures)
		}
	})
	t.Run("token endpoint", func(t *testing.T) {
		as, url := setup(t, probetest.AuthConfig{}, probetest.Config{}, false)
		res := run(t, newClient(t, oauth.Config{ServerURL: url, ClientSecret: "wrong-secret"}), url, "")
		if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "OAuth token endpoint") || !strings.Contains(res.Error, "invalid_client") {
			t.Errorf("%s: %s", res.Reason, res.Error)
		}
		noSecrets(t, as, res)
		if strings.Contains(res.Error, "wrong-secret") {
			t.Errorf("the secret is in the error: %s", res.Error)
		}
	})
	t.Run("the call itself", func(t *testing.T) {
		// A token endpoint that issues tokens the server does not take.
		as := probetest.NewAuthServer(probetest.AuthConfig{ClientID: clientID, ClientSecret: clientSecret})
		asSrv := httptest.NewServer(as)
		defer asSrv.Close()
		as.SetURL(asSrv.URL)
		other := probetest.NewAuthServer(probetest.AuthConfig{})
		other.SetURL(asSrv.URL)
		kit := probetest.NewServer(probetest.Config{})
		defer kit.Close()
		mcp := httptest.NewServer(other.Protect(kit))
		defer mcp.Close()
		res := run(t, newClient(t, oauth.Config{ServerURL: mcp.URL + "/mcp"}), mcp.URL+"/mcp", "")
		if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "the call itself") {
			t.Errorf("%s: %s", res.Reason, res.Error)
		}
	})
	t.Run("resource metadata for another resource", func(t *testing.T) {
		mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/") {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"resource":"https://elsewhere.example/mcp","authorization_servers":["https://as.example"]}`))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
			http.Error(w, "no", http.StatusUnauthorized)
		}))
		defer mcp.Close()
		res := run(t, newClient(t, oauth.Config{ServerURL: mcp.URL + "/mcp"}), mcp.URL+"/mcp", probe.TransportHTTP)
		if res.Reason != probe.ReasonUnauthorized || !strings.Contains(res.Error, "another resource") {
			t.Errorf("%s: %s", res.Reason, res.Error)
		}
	})
}

func TestJWTExpiry(t *testing.T) {
	// {"alg":"none"} . {"exp":2000000000} . no signature
	jwt := "eyJhbGciOiJub25lIn0.eyJleHAiOjIwMDAwMDAwMDB9."
	exp, ok := oauth.JWTExpiry("Bearer " + jwt)
	if !ok || exp.Unix() != 2000000000 {
		t.Errorf("JWTExpiry = %v %v", exp, ok)
	}
	for _, s := range []string{"", "opaque-token", "Bearer abc.def.ghi", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."} {
		if _, ok := oauth.JWTExpiry(s); ok {
			t.Errorf("JWTExpiry(%q) ok", s)
		}
	}
}

// A rotated refresh token is written back only when it is a token: visible
// ASCII, no line break, of a bounded length. A rotating authorization
// server's multi-line or huge value is refused, the file is left as it was
// and the refusal counted (bad_response), never written where a following
// line could be read as something else.
func TestHostileRotatedRefreshTokenNotWrittenBack(t *testing.T) {
	for name, value := range map[string]string{
		"line break":  "rt-next\nexport EVIL=1",
		"control":     "rt-\x1b[31mred",
		"non-ASCII":   "rt-\u00e9t\u00e9",
		"space":       "rt next",
		"over 16 KiB": "rt-" + strings.Repeat("x", 16<<10),
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "refresh-token")
			if err := os.WriteFile(file, []byte("rt-initial\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, url := setup(t, probetest.AuthConfig{AuthMethods: []string{probetest.AuthNone}, RefreshToken: "rt-initial", Rotate: true, RotateTo: value}, probetest.Config{}, false)
			c := newClient(t, oauth.Config{ServerURL: url, Grant: oauth.GrantRefreshToken, RefreshToken: "rt-initial", RefreshTokenFile: file})
			res := run(t, c, url, "")
			if res.OK || !strings.Contains(res.Error, "refresh token") || !strings.Contains(res.Error, "printable ASCII") {
				t.Errorf("probe: ok=%v %s: %s; want a refusal of the issued refresh token", res.OK, res.Reason, res.Error)
			}
			if got, _ := os.ReadFile(file); string(got) != "rt-initial\n" {
				t.Errorf("the file holds %.60q, want it untouched", got)
			}
			if n := c.Status().RefreshFailures[oauth.FailBadResponse]; n != 1 {
				t.Errorf("bad_response failures = %d, want 1", n)
			}
		})
	}
}

// The refresh token file is a symlink: the rotated token replaces the link
// with a file of its own (0600); the file the link pointed at keeps its
// content and mode.
func TestRotatedRefreshTokenNeverWrittenThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "profile")
	if err := os.WriteFile(target, []byte("rt-initial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "refresh-token")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	as, url := setup(t, probetest.AuthConfig{AuthMethods: []string{probetest.AuthNone}, RefreshToken: "rt-initial", Rotate: true}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url, Grant: oauth.GrantRefreshToken, RefreshToken: "rt-initial", RefreshTokenFile: link})
	if res := run(t, c, url, ""); !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	if got, _ := os.ReadFile(target); string(got) != "rt-initial\n" {
		t.Errorf("the link's target holds %q, want it untouched", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("the link's target mode = %v, want its own 0644", fi.Mode().Perm())
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token path is %v (%v), want a regular file of mode 0600", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(link); !as.RefreshTokenValid(strings.TrimSpace(string(got))) {
		t.Errorf("the token file holds %q, not the rotated token", got)
	}
}

// A credential's stated expiry is clamped to about 100 years either side of
// now: an exp of 1e308 (or -1e308) would otherwise overflow into a time no
// JSON encoder writes and a metric of -9.22e18.
func TestExpiriesClampedToAHundredYears(t *testing.T) {
	const horizon = 100 * 365 * 24 * time.Hour
	enc := func(claims string) string {
		return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + "."
	}
	for _, tc := range []struct {
		claims string
		want   time.Duration // from now, within a minute
	}{
		{`{"exp":1e308}`, horizon},
		{`{"exp":-1e308}`, -horizon},
		{`{"exp":99999999999}`, horizon},
		{`{"exp":9223372036854775807}`, horizon},
	} {
		exp, ok := oauth.JWTExpiry(enc(tc.claims))
		if !ok {
			t.Errorf("%s: no expiry", tc.claims)
			continue
		}
		if d := time.Until(exp) - tc.want; d < -time.Minute || d > time.Minute {
			t.Errorf("%s: expiry %v, want about now %+v", tc.claims, exp, tc.want)
		}
		if _, err := json.Marshal(exp); err != nil {
			t.Errorf("%s: the expiry does not encode: %v", tc.claims, err)
		}
	}

	// refresh_token_expires_in of 1e10 seconds: 317 years, not 1759.
	file := filepath.Join(t.TempDir(), "refresh-token")
	if err := os.WriteFile(file, []byte("rt-initial\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url := setup(t, probetest.AuthConfig{AuthMethods: []string{probetest.AuthNone}, RefreshToken: "rt-initial", RefreshExpiresIn: 1e10}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url, Grant: oauth.GrantRefreshToken, RefreshToken: "rt-initial", RefreshTokenFile: file})
	if res := run(t, c, url, ""); !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	for _, e := range c.Status().Expiries {
		if e.Credential != oauth.CredentialRefreshToken {
			continue
		}
		if d := time.Until(e.Expiry) - horizon; d < -time.Minute || d > time.Minute {
			t.Errorf("refresh token expiry %v, want about 100 years from now", e.Expiry)
		}
	}
}

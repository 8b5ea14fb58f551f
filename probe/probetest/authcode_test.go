package probetest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// authCodeServer serves a test authorization server that offers the
// authorization code grant to the public client "cli".
func authCodeServer(t *testing.T, cfg probetest.AuthConfig) (*probetest.AuthServer, string) {
	t.Helper()
	cfg.ClientID, cfg.AuthMethods = "cli", []string{probetest.AuthNone}
	cfg.Grants = []string{"authorization_code", "refresh_token"}
	as := probetest.NewAuthServer(cfg)
	srv := httptest.NewServer(as)
	t.Cleanup(srv.Close)
	as.SetURL(srv.URL)
	return as, srv.URL
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize asks for a code and returns the redirect's query, or the
// status of an error page.
func authorize(t *testing.T, base string, q url.Values) (url.Values, int) {
	t.Helper()
	resp, err := noRedirect.Get(base + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, resp.StatusCode
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc.Query(), resp.StatusCode
}

func exchange(t *testing.T, base string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(base+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &body)
	return resp.StatusCode, body
}

func codeRequest(redirect string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {"cli"}, "redirect_uri": {redirect}, "state": {"s1"},
		"code_challenge": {challenge("verifier-0123456789-0123456789-0123456789")}, "code_challenge_method": {"S256"},
		"resource": {"http://mcp.test/mcp"}, "scope": {"mcp:read"}}
}

// The test authorization server holds clients to the rules: a loopback
// redirect URI on any port, PKCE S256 verified, a code once, by its
// client, with its redirect URI.
func TestAuthorizationCodeRules(t *testing.T) {
	_, base := authCodeServer(t, probetest.AuthConfig{})
	const redirect = "http://127.0.0.1:54321/callback"
	q, status := authorize(t, base, codeRequest(redirect))
	if status != http.StatusFound || q.Get("code") == "" || q.Get("state") != "s1" || q.Get("iss") != base {
		t.Fatalf("authorize: %d %v", status, q)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {"cli"}, "code": {q.Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {"a-wrong-verifier-0123456789-0123456789"}}
	if status, body := exchange(t, base, form); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier: %d %v, want invalid_grant", status, body)
	}
	// The code is gone with the failed try, as RFC 6749 section 4.1.2 allows.
	form.Set("code_verifier", "verifier-0123456789-0123456789-0123456789")
	if status, body := exchange(t, base, form); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("a code used twice: %d %v, want invalid_grant", status, body)
	}
	q, _ = authorize(t, base, codeRequest(redirect))
	form.Set("code", q.Get("code"))
	form.Set("redirect_uri", "http://127.0.0.1:54321/other")
	if status, body := exchange(t, base, form); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("another redirect URI at the exchange: %d %v, want invalid_grant", status, body)
	}
	q, _ = authorize(t, base, codeRequest(redirect))
	form.Set("code", q.Get("code"))
	form.Set("redirect_uri", redirect)
	status, body := exchange(t, base, form)
	if status != http.StatusOK || body["access_token"] == nil || body["refresh_token"] == nil || body["scope"] != "mcp:read" {
		t.Errorf("a good exchange: %d %v", status, body)
	}

	for name, tc := range map[string]struct {
		change  func(url.Values)
		status  int
		errCode string
	}{
		"unknown client":        {func(v url.Values) { v.Set("client_id", "stranger") }, http.StatusBadRequest, ""},
		"redirect not loopback": {func(v url.Values) { v.Set("redirect_uri", "https://evil.test/callback") }, http.StatusBadRequest, ""},
		"another path":          {func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:1/elsewhere") }, http.StatusBadRequest, ""},
		"no PKCE":               {func(v url.Values) { v.Del("code_challenge") }, http.StatusFound, "invalid_request"},
		"plain PKCE":            {func(v url.Values) { v.Set("code_challenge_method", "plain") }, http.StatusFound, "invalid_request"},
	} {
		v := codeRequest(redirect)
		tc.change(v)
		q, status := authorize(t, base, v)
		if status != tc.status || (tc.errCode != "" && q.Get("error") != tc.errCode) {
			t.Errorf("%s: %d %v, want %d %s", name, status, q, tc.status, tc.errCode)
		}
	}
}

func TestConsentAnswers(t *testing.T) {
	for consent, check := range map[probetest.Consent]func(url.Values) bool{
		probetest.ConsentDeny: func(q url.Values) bool {
			return q.Get("error") == "access_denied" && q.Get("state") == "s1" && q.Get("code") == ""
		},
		probetest.ConsentWrongState: func(q url.Values) bool { return q.Get("code") != "" && q.Get("state") != "s1" },
	} {
		_, base := authCodeServer(t, probetest.AuthConfig{Consent: consent})
		if q, status := authorize(t, base, codeRequest("http://127.0.0.1:1/callback")); status != http.StatusFound || !check(q) {
			t.Errorf("consent %q: %d %v", consent, status, q)
		}
	}
}

// Dynamic registration gives a loopback-only public client; a Client ID
// Metadata Document is fetched and must name itself.
func TestRegistrationAndMetadataDocuments(t *testing.T) {
	doc := httptest.NewTLSServer(nil)
	t.Cleanup(doc.Close)
	good, liar := doc.URL+"/good.json", doc.URL+"/liar.json"
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The liar claims to be the good document.
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": good, "client_name": "x", "redirect_uris": []string{"http://127.0.0.1/callback"}})
	})
	as, base := authCodeServer(t, probetest.AuthConfig{Registration: true, CIMD: true})
	resp, err := http.Post(base+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:999/callback"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || reg["client_id"] == nil || reg["client_secret"] != nil || as.Registrations() != 1 {
		t.Errorf("register: %d %v", resp.StatusCode, reg)
	}
	resp, err = http.Post(base+"/register", "application/json", strings.NewReader(`{"redirect_uris":["https://evil.test/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a non-loopback redirect URI registered: %d", resp.StatusCode)
	}

	_, base = authCodeServer(t, probetest.AuthConfig{CIMD: true, CIMDClient: doc.Client()})
	for id, want := range map[string]int{good: http.StatusFound, liar: http.StatusBadRequest} {
		v := codeRequest("http://127.0.0.1:1/callback")
		v.Set("client_id", id)
		if _, status := authorize(t, base, v); status != want {
			t.Errorf("document %s: %d, want %d", id, status, want)
		}
	}
}

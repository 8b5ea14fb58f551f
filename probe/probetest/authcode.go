package probetest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Consent is how the test authorization server's authorization endpoint
// answers: at once, with no person in the loop.
type Consent string

const (
	// ConsentApprove (the zero value) sends the browser back with a code.
	ConsentApprove Consent = ""
	// ConsentDeny sends it back with error=access_denied.
	ConsentDeny Consent = "deny"
	// ConsentWrongState sends it back with a code and another state than
	// the request's, as a forged answer would.
	ConsentWrongState Consent = "wrong-state"
)

// AuthorizationRequest is what a client asked the authorization endpoint.
type AuthorizationRequest struct {
	ClientID, RedirectURI, Scope, Resource, CodeChallengeMethod string
	// Err is the error answered ("" for a code): in the redirect, or, for
	// an unknown client or redirect URI, on the page itself.
	Err string
}

// AuthorizationRequests returns every request the authorization endpoint
// had, in order.
func (a *AuthServer) AuthorizationRequests() []AuthorizationRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.authorizations)
}

// Registrations returns how many clients registered dynamically.
func (a *AuthServer) Registrations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registrations
}

// client is a client the server learned of: registered (RFC 7591), or by
// its metadata document.
type client struct {
	secret       string
	method       string // token endpoint authentication
	redirectURIs []string
}

type authCode struct {
	clientID, redirectURI, challenge, scope, resource string
	expiry                                            time.Time
}

func (a *AuthServer) client(id string) *client {
	if id == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clients[id]
}

func (a *AuthServer) authorizePath() string { return a.endpointPath("/authorize") }
func (a *AuthServer) registerPath() string  { return a.endpointPath("/register") }

// endpointPath is where an endpoint is: under the issuer, or at the
// origin's default (2025-03-26) without metadata.
func (a *AuthServer) endpointPath(p string) string {
	if a.cfg.Metadata == MetadataNone {
		return p
	}
	return a.cfg.IssuerPath + p
}

// redirectAllowed compares a redirect URI with the registered ones, any
// port for a loopback one (RFC 8252 section 7.3).
func redirectAllowed(got string, registered []string) bool {
	g, err := url.Parse(got)
	if err != nil || g.RawQuery != "" || g.Fragment != "" {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil {
			continue
		}
		if u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "::1") {
			if g.Scheme == u.Scheme && g.Hostname() == u.Hostname() && g.Path == u.Path {
				return true
			}
			continue
		}
		if got == r {
			return true
		}
	}
	return false
}

// serveAuthorize is the authorization endpoint: a client and redirect URI
// it does not know get an error page (never a redirect); anything else is
// answered in the redirect, at once, as Consent says.
func (a *AuthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := AuthorizationRequest{ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), Scope: q.Get("scope"),
		Resource: q.Get("resource"), CodeChallengeMethod: q.Get("code_challenge_method")}
	record := func(errCode string) {
		req.Err = errCode
		a.mu.Lock()
		a.authorizations = append(a.authorizations, req)
		a.mu.Unlock()
	}
	var redirects []string
	switch c := a.client(req.ClientID); {
	case req.ClientID == a.cfg.ClientID && req.ClientID != "":
		redirects = a.cfg.RedirectURIs
	case c != nil:
		redirects = c.redirectURIs
	case a.cfg.CIMD && strings.HasPrefix(req.ClientID, "https://"):
		var ok bool
		if redirects, ok = a.fetchClientDocument(req.ClientID); !ok {
			record("invalid_client")
			http.Error(w, "probetest: the client's metadata document could not be read or does not name it", http.StatusBadRequest)
			return
		}
	default:
		record("invalid_client")
		http.Error(w, "probetest: unknown client_id", http.StatusBadRequest)
		return
	}
	if !redirectAllowed(req.RedirectURI, redirects) {
		record("invalid_redirect_uri")
		http.Error(w, "probetest: redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(req.RedirectURI)
	answer := func(v url.Values) {
		if !a.cfg.NoIssInAnswer {
			v.Set("iss", a.issuer(r))
		}
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	state := q.Get("state")
	switch {
	case q.Get("response_type") != "code":
		record("unsupported_response_type")
		answer(url.Values{"error": {"unsupported_response_type"}, "state": {state}})
		return
	case req.CodeChallengeMethod != "S256" || q.Get("code_challenge") == "":
		record("invalid_request")
		answer(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}, "state": {state}})
		return
	case a.cfg.Consent == ConsentDeny:
		record("access_denied")
		answer(url.Values{"error": {"access_denied"}, "error_description": {"the user denied access"}, "state": {state}})
		return
	}
	code := "code-" + rand.Text()
	a.mu.Lock()
	a.codes[code] = &authCode{clientID: req.ClientID, redirectURI: req.RedirectURI, challenge: q.Get("code_challenge"),
		scope: req.Scope, resource: req.Resource, expiry: time.Now().Add(time.Minute)}
	a.mu.Unlock()
	record("")
	if a.cfg.Consent == ConsentWrongState {
		state += "-not-yours"
	}
	answer(url.Values{"code": {code}, "state": {state}})
}

// fetchClientDocument reads a Client ID Metadata Document and returns its
// redirect URIs when it names itself; the client is then known as a public
// one.
func (a *AuthServer) fetchClientDocument(id string) ([]string, bool) {
	hc := a.cfg.CIMDClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Get(id)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var doc struct {
		ClientID     string   `json:"client_id"`
		ClientName   string   `json:"client_name"`
		RedirectURIs []string `json:"redirect_uris"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil ||
		doc.ClientID != id || doc.ClientName == "" || len(doc.RedirectURIs) == 0 {
		return nil, false
	}
	a.mu.Lock()
	a.clients[id] = &client{method: AuthNone, redirectURIs: doc.RedirectURIs}
	a.mu.Unlock()
	return doc.RedirectURIs, true
}

// serveRegister is RFC 7591 registration: loopback redirect URIs only; a
// client asking for none as its authentication is public, one asking for
// client_secret_basic or _post gets a secret.
func (a *AuthServer) serveRegister(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		RedirectURIs            []string `json:"redirect_uris"`
		ClientName              string   `json:"client_name"`
		GrantTypes              []string `json:"grant_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "probetest: redirect_uris is required"})
		return
	}
	for _, u := range req.RedirectURIs {
		if !redirectAllowed(u, []string{"http://127.0.0.1" + mustPath(u)}) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri", "error_description": "probetest: loopback redirect URIs only"})
			return
		}
	}
	c := &client{method: req.TokenEndpointAuthMethod, redirectURIs: req.RedirectURIs}
	switch c.method {
	case "", AuthNone:
		c.method = AuthNone
	case AuthBasic, AuthPost:
		c.secret = "dcr-secret-" + rand.Text()
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "probetest: unsupported token_endpoint_auth_method"})
		return
	}
	id := "dcr-" + rand.Text()
	a.mu.Lock()
	a.clients[id] = c
	a.registrations++
	a.mu.Unlock()
	body := map[string]any{"client_id": id, "client_id_issued_at": time.Now().Unix(), "redirect_uris": c.redirectURIs,
		"grant_types": req.GrantTypes, "token_endpoint_auth_method": c.method, "client_name": req.ClientName}
	if c.secret != "" {
		body["client_secret"], body["client_secret_expires_at"] = c.secret, 0
	}
	writeJSON(w, http.StatusCreated, body)
}

func mustPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "/"
	}
	return u.Path
}

// exchangeCode is the token endpoint's authorization_code grant: the code
// once, by the client it was issued to, with the same redirect URI and
// the PKCE verifier of its challenge.
func (a *AuthServer) exchangeCode(w http.ResponseWriter, r *http.Request, req TokenRequest, method string) {
	f := r.PostForm
	clientID := f.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok {
		clientID, _ = url.QueryUnescape(id)
	}
	a.mu.Lock()
	c := a.codes[f.Get("code")]
	delete(a.codes, f.Get("code")) // once, whatever comes of it
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	ok := c != nil && time.Now().Before(c.expiry) && c.clientID == clientID && c.redirectURI == f.Get("redirect_uri") &&
		base64.RawURLEncoding.EncodeToString(sum[:]) == c.challenge
	if !ok {
		req.Err = "invalid_grant"
		a.requests = append(a.requests, req)
		a.mu.Unlock()
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	req.AuthMethod, req.Scope, req.Resource = method, c.scope, c.resource
	scopes := strings.Fields(c.scope)
	at := "at-" + rand.Text()
	a.tokens[at] = grantedToken{scopes: scopes, resource: c.resource, expiry: time.Now().Add(time.Duration(a.cfg.ExpiresIn) * time.Second)}
	body := map[string]any{"token_type": "Bearer", "access_token": at, "expires_in": a.cfg.ExpiresIn, "scope": c.scope}
	if !a.cfg.NoRefreshTokenOnCode {
		rt := "rt-" + rand.Text()
		a.refresh[rt] = true
		body["refresh_token"] = rt
	}
	a.requests = append(a.requests, req)
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

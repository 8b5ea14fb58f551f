package probetest

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MetadataLocation is where a test authorization server publishes its
// metadata.
type MetadataLocation string

const (
	// MetadataOAuth is RFC 8414's /.well-known/oauth-authorization-server
	// (path-inserted before an issuer path).
	MetadataOAuth MetadataLocation = "oauth"
	// MetadataOIDC is OpenID Connect Discovery's
	// /.well-known/openid-configuration (path-inserted before an issuer
	// path, as the MCP authorization spec asks clients to try).
	MetadataOIDC MetadataLocation = "oidc"
	// MetadataNone publishes none: a client must fall back to the default
	// endpoints (/authorize, /token, /register) of the 2025-03-26 revision.
	MetadataNone MetadataLocation = "none"
)

// Client authentication methods a test authorization server accepts at its
// token endpoint.
const (
	AuthBasic         = "client_secret_basic"
	AuthPost          = "client_secret_post"
	AuthPrivateKeyJWT = "private_key_jwt"
	AuthNone          = "none" // a public client (refresh tokens only)
)

// AuthConfig sets up a test authorization server and the MCP server it
// protects. Zero values take the defaults.
type AuthConfig struct {
	// Metadata is where the authorization server metadata is; default
	// MetadataOAuth.
	Metadata MetadataLocation
	// IssuerPath is the issuer's path ("/tenant1"; default none): metadata
	// is then at the path-inserted well-known URL, the token endpoint at
	// IssuerPath+"/token".
	IssuerPath string
	// AuthMethods are the token_endpoint_auth_methods_supported; default
	// client_secret_basic. A request by another method fails invalid_client.
	AuthMethods []string
	// Grants are the grant_types_supported; default client_credentials and
	// refresh_token. Only those two are served.
	Grants []string
	// ClientID and ClientSecret identify the one client; ClientKey is its
	// public key for private_key_jwt.
	ClientID, ClientSecret string
	ClientKey              crypto.PublicKey
	// ScopesSupported is published in both metadata documents.
	ScopesSupported []string
	// RequiredScope, when set, is what every MCP request needs; it is sent
	// in the 401 challenge's scope unless NoChallengeScope.
	RequiredScope    string
	NoChallengeScope bool
	// StepUpScope, when set, is what tools/list needs on top: a token
	// without it gets 403 insufficient_scope naming it. NeverGrant makes the
	// token endpoint leave it out of every token, to see a client give up.
	StepUpScope string
	NeverGrant  bool
	// ExpiresIn is the access tokens' lifetime in seconds; default 3600.
	ExpiresIn int
	// RefreshToken is the valid refresh token at the start; Rotate replaces
	// it at every refresh (the old one is then invalid_grant).
	// RefreshExpiresIn, when positive, is stated as refresh_token_expires_in.
	RefreshToken     string
	Rotate           bool
	RefreshExpiresIn int
	// RotateTo, when set, is the refresh token a rotation issues instead of
	// a random one: a hostile value (a line break, a megabyte) to see what
	// a client writes back.
	RotateTo string
	// NoResourceMetadataInChallenge leaves resource_metadata out of the 401
	// challenge: a client must find the protected resource metadata at its
	// well-known URL. Legacy20250326 publishes no protected resource
	// metadata at all: the authorization server is the MCP server's origin.
	NoResourceMetadataInChallenge bool
	Legacy20250326                bool
	// MetadataAtRoot publishes the metadata at the root well-known URL
	// even with an IssuerPath, whose issuer then differs from the URL it
	// is found at (as some 2025-03-26 servers have it).
	MetadataAtRoot bool

	// The authorization code grant, served when Grants lists
	// authorization_code (see authcode.go): an authorization endpoint that
	// answers at once as Consent says, PKCE (S256) required.
	Consent Consent
	// RedirectURIs are the configured client's redirect URIs; default
	// http://127.0.0.1/callback. A loopback one matches any port (RFC 8252).
	RedirectURIs []string
	// CIMD publishes client_id_metadata_document_supported: a client_id
	// that is an https URL is fetched with CIMDClient (default
	// http.DefaultClient) and must be a document naming itself and the
	// redirect URI.
	CIMD       bool
	CIMDClient *http.Client
	// Registration publishes an RFC 7591 registration_endpoint.
	Registration bool
	// NoRefreshTokenOnCode leaves the refresh token out of the code
	// exchange's answer; NoPKCE leaves code_challenge_methods_supported out
	// of the metadata.
	NoRefreshTokenOnCode bool
	NoPKCE               bool
	// NoIssInAnswer leaves iss out of the authorization response although
	// the metadata promises it (RFC 9207), as a mix-up would.
	NoIssInAnswer bool
}

// TokenRequest is what a client sent to the token endpoint.
type TokenRequest struct {
	Grant      string
	AuthMethod string
	Scope      string
	Resource   string
	Err        string // the OAuth error answered, "" for a token
}

// AuthServer is an OAuth 2.1 authorization server for tests (client
// credentials and refresh tokens, metadata per RFC 8414 or OpenID Connect,
// or none) and the protected-resource side of an MCP server (RFC 9728
// metadata, Bearer challenges, step-up on insufficient_scope). Serve it on
// its own httptest.Server, or on the MCP server's with Mux for the
// 2025-03-26 layout.
type AuthServer struct {
	cfg AuthConfig

	mu       sync.Mutex
	url      string // set by SetURL; else each request's origin
	tokens   map[string]grantedToken
	refresh  map[string]bool
	requests []TokenRequest
	metadata map[string]int // metadata and resource metadata requests by path
	retired  []string       // refresh tokens rotated away
	// assertionAudiences are the aud claims of the client assertions sent.
	assertionAudiences []string

	clients        map[string]*client // registered and document clients, by client_id
	codes          map[string]*authCode
	authorizations []AuthorizationRequest
	registrations  int
}

type grantedToken struct {
	scopes   []string
	resource string
	expiry   time.Time
}

// NewAuthServer returns a test authorization server for cfg.
func NewAuthServer(cfg AuthConfig) *AuthServer {
	if cfg.Metadata == "" {
		cfg.Metadata = MetadataOAuth
	}
	if len(cfg.AuthMethods) == 0 {
		cfg.AuthMethods = []string{AuthBasic}
	}
	if len(cfg.Grants) == 0 {
		cfg.Grants = []string{"client_credentials", "refresh_token"}
	}
	if cfg.ExpiresIn == 0 {
		cfg.ExpiresIn = 3600
	}
	if len(cfg.RedirectURIs) == 0 {
		cfg.RedirectURIs = []string{"http://127.0.0.1/callback"}
	}
	a := &AuthServer{cfg: cfg, tokens: map[string]grantedToken{}, refresh: map[string]bool{}, metadata: map[string]int{},
		clients: map[string]*client{}, codes: map[string]*authCode{}}
	if cfg.RefreshToken != "" {
		a.refresh[cfg.RefreshToken] = true
	}
	return a
}

// SetURL tells the server its own origin (the httptest.Server's URL), which
// the protected resource metadata names as the authorization server.
func (a *AuthServer) SetURL(u string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.url = strings.TrimSuffix(u, "/")
}

// Issuer is the issuer identifier, once SetURL has told the server its
// origin ("" before).
func (a *AuthServer) Issuer() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.url == "" {
		return ""
	}
	return a.url + a.cfg.IssuerPath
}

// TokenEndpoint is the token endpoint's URL, once SetURL has told the
// server its origin.
func (a *AuthServer) TokenEndpoint() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.url + a.tokenPath()
}

// issuer is the issuer identifier, given the origin a request came to.
func (a *AuthServer) issuer(r *http.Request) string {
	a.mu.Lock()
	base := a.url
	a.mu.Unlock()
	if base == "" {
		base = origin(r)
	}
	return base + a.cfg.IssuerPath
}

// Requests returns every token request so far, in order.
func (a *AuthServer) Requests() []TokenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// AssertionAudiences returns the aud claim of every private_key_jwt client
// assertion sent so far, printed.
func (a *AuthServer) AssertionAudiences() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.assertionAudiences)
}

// Issued returns every access and refresh token issued so far, so a test
// can assert that none appears in any output.
func (a *AuthServer) Issued() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for t := range a.tokens {
		out = append(out, t)
	}
	for t := range a.refresh {
		out = append(out, t)
	}
	for c := range a.codes {
		out = append(out, c)
	}
	for _, c := range a.clients {
		if c.secret != "" {
			out = append(out, c.secret)
		}
	}
	return append(out, a.retired...)
}

// MetadataRequests returns how many GETs a well-known path had (found or not).
func (a *AuthServer) MetadataRequests(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.metadata[path]
}

// RefreshTokenValid reports whether rt would be accepted now.
func (a *AuthServer) RefreshTokenValid(rt string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refresh[rt]
}

// RevokeRefreshTokens makes every refresh token invalid_grant, as an
// expired or revoked grant is.
func (a *AuthServer) RevokeRefreshTokens() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
}

// ServeHTTP serves the authorization server: its metadata and its token
// endpoint. Everything else is 404.
func (a *AuthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if strings.HasPrefix(p, "/.well-known/") || strings.Contains(p, "/.well-known/") {
		a.mu.Lock()
		a.metadata[p]++
		a.mu.Unlock()
	}
	switch {
	case r.Method == http.MethodGet && p == a.metadataPath():
		a.serveMetadata(w, r)
	case p == a.tokenPath():
		a.serveToken(w, r)
	case p == a.authorizePath() && slices.Contains(a.cfg.Grants, "authorization_code"):
		a.serveAuthorize(w, r)
	case p == a.registerPath() && a.cfg.Registration:
		a.serveRegister(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *AuthServer) metadataPath() string {
	switch {
	case a.cfg.Metadata == MetadataOAuth && a.cfg.MetadataAtRoot:
		return "/.well-known/oauth-authorization-server"
	case a.cfg.Metadata == MetadataOAuth:
		return "/.well-known/oauth-authorization-server" + a.cfg.IssuerPath
	case a.cfg.Metadata == MetadataOIDC:
		return "/.well-known/openid-configuration" + a.cfg.IssuerPath
	}
	return "-" // none
}

func (a *AuthServer) tokenPath() string {
	if a.cfg.Metadata == MetadataNone {
		return "/token" // the 2025-03-26 default, at the origin
	}
	return a.cfg.IssuerPath + "/token"
}

func (a *AuthServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	iss := a.issuer(r)
	md := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          a.cfg.Grants,
		"token_endpoint_auth_methods_supported":          a.cfg.AuthMethods,
		"scopes_supported":                               a.cfg.ScopesSupported,
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
	}
	if a.cfg.NoPKCE {
		delete(md, "code_challenge_methods_supported")
	}
	if a.cfg.Registration {
		md["registration_endpoint"] = iss + "/register"
	}
	if a.cfg.CIMD {
		md["client_id_metadata_document_supported"] = true
	}
	writeJSON(w, http.StatusOK, md)
}

func (a *AuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	req := TokenRequest{Grant: r.PostForm.Get("grant_type"), Scope: r.PostForm.Get("scope"), Resource: r.PostForm.Get("resource")}
	answer := func(status int, code string) {
		req.Err = code
		a.mu.Lock()
		a.requests = append(a.requests, req)
		a.mu.Unlock()
		tokenError(w, status, code)
	}
	method, ok := a.authenticate(r)
	req.AuthMethod = method
	if !ok {
		answer(http.StatusUnauthorized, "invalid_client")
		return
	}
	if !slices.Contains(a.cfg.Grants, req.Grant) {
		answer(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	scopes := strings.Fields(req.Scope)
	if a.cfg.NeverGrant {
		scopes = slices.DeleteFunc(scopes, func(s string) bool { return s == a.cfg.StepUpScope })
	}
	body := map[string]any{"token_type": "Bearer", "expires_in": a.cfg.ExpiresIn, "scope": strings.Join(scopes, " ")}
	if req.Grant == "client_credentials" && method == AuthNone {
		answer(http.StatusUnauthorized, "invalid_client")
		return
	}
	if req.Grant == "authorization_code" {
		a.exchangeCode(w, r, req, method)
		return
	}
	a.mu.Lock()
	if req.Grant == "refresh_token" {
		rt := r.PostForm.Get("refresh_token")
		if !a.refresh[rt] {
			a.mu.Unlock()
			answer(http.StatusBadRequest, "invalid_grant")
			return
		}
		if a.cfg.Rotate {
			delete(a.refresh, rt)
			a.retired = append(a.retired, rt)
			rt = "rt-" + rand.Text()
			if a.cfg.RotateTo != "" {
				rt = a.cfg.RotateTo
			}
			a.refresh[rt] = true
		}
		body["refresh_token"] = rt
		if a.cfg.RefreshExpiresIn > 0 {
			body["refresh_token_expires_in"] = a.cfg.RefreshExpiresIn
		}
	}
	at := "at-" + rand.Text()
	a.tokens[at] = grantedToken{scopes: scopes, resource: req.Resource, expiry: time.Now().Add(time.Duration(a.cfg.ExpiresIn) * time.Second)}
	body["access_token"] = at
	a.requests = append(a.requests, req)
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// authenticate tells which client authentication method a token request
// used and whether it holds.
func (a *AuthServer) authenticate(r *http.Request) (string, bool) {
	allowed := func(m string) bool { return slices.Contains(a.cfg.AuthMethods, m) }
	if id, secret, ok := r.BasicAuth(); ok {
		// RFC 6749 section 2.3.1: form-encoded before base64.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if c := a.client(id); c != nil {
			return AuthBasic, c.method == AuthBasic && secret == c.secret
		}
		return AuthBasic, allowed(AuthBasic) && id == a.cfg.ClientID && secret == a.cfg.ClientSecret
	}
	f := r.PostForm
	if c := a.client(f.Get("client_id")); c != nil && f.Get("client_assertion_type") == "" {
		if f.Get("client_secret") != "" {
			return AuthPost, c.method == AuthPost && f.Get("client_secret") == c.secret
		}
		return AuthNone, c.method == AuthNone
	}
	switch {
	case f.Get("client_assertion_type") != "":
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || a.cfg.ClientKey == nil {
			return AuthPrivateKeyJWT, false
		}
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(f.Get("client_assertion"), claims,
			func(*jwt.Token) (any, error) { return a.cfg.ClientKey, nil },
			jwt.WithIssuer(a.cfg.ClientID), jwt.WithSubject(a.cfg.ClientID), jwt.WithExpirationRequired())
		// RFC 7523 as updated for OAuth 2.1 (draft-ietf-oauth-rfc7523bis):
		// the audience is the issuer identifier, as a single string; the
		// token endpoint's URL is not accepted in its place.
		aud, _ := claims["aud"].(string)
		jti, _ := claims["jti"].(string)
		ok := err == nil && aud == a.issuer(r) && jti != "" && (f.Get("client_id") == "" || f.Get("client_id") == a.cfg.ClientID)
		a.mu.Lock()
		a.assertionAudiences = append(a.assertionAudiences, fmt.Sprint(claims["aud"]))
		a.mu.Unlock()
		return AuthPrivateKeyJWT, allowed(AuthPrivateKeyJWT) && ok
	case f.Get("client_secret") != "":
		return AuthPost, allowed(AuthPost) && f.Get("client_id") == a.cfg.ClientID && f.Get("client_secret") == a.cfg.ClientSecret
	}
	return AuthNone, allowed(AuthNone) && f.Get("client_id") == a.cfg.ClientID
}

func tokenError(w http.ResponseWriter, status int, code string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": "probetest: " + code})
}

// Protect serves next (an MCP test server) as a resource this server
// protects: its protected resource metadata at the well-known URLs of
// RFC 9728 (path-inserted and at the root), and every other request only
// with a valid bearer token issued for this resource (the server's URL) with
// the scopes the config asks for.
func (a *AuthServer) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			a.mu.Lock()
			a.metadata[r.URL.Path]++
			a.mu.Unlock()
			if a.cfg.Legacy20250326 {
				http.NotFound(w, r)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{
				"resource":                 origin(r) + strings.TrimPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"),
				"authorization_servers":    []string{a.issuerFor(r)},
				"scopes_supported":         a.cfg.ScopesSupported,
				"bearer_methods_supported": []string{"header"},
			})
			return
		}
		method := peekMethod(r)
		tok, ok := a.check(r)
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", a.challenge(r, "invalid_token", a.cfg.RequiredScope))
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case a.cfg.RequiredScope != "" && !slices.Contains(tok.scopes, a.cfg.RequiredScope):
			w.Header().Set("WWW-Authenticate", a.challenge(r, "insufficient_scope", a.cfg.RequiredScope))
			http.Error(w, "Forbidden", http.StatusForbidden)
		case method == "tools/list" && a.cfg.StepUpScope != "" && !slices.Contains(tok.scopes, a.cfg.StepUpScope):
			w.Header().Set("WWW-Authenticate", a.challenge(r, "insufficient_scope", strings.TrimSpace(a.cfg.RequiredScope+" "+a.cfg.StepUpScope)))
			http.Error(w, "Forbidden", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// Mux serves the authorization server and the protected MCP server on one
// origin, as in the 2025-03-26 revision (and for tests that want one
// listener).
func (a *AuthServer) Mux(next http.Handler) http.Handler {
	protected := a.Protect(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == a.metadataPath() || p == a.tokenPath() || p == a.authorizePath() || p == a.registerPath() ||
			strings.HasPrefix(p, "/.well-known/oauth-authorization-server") || strings.HasPrefix(p, "/.well-known/openid-configuration") {
			a.ServeHTTP(w, r)
			return
		}
		protected.ServeHTTP(w, r)
	})
}

func (a *AuthServer) issuerFor(r *http.Request) string {
	return a.issuer(r)
}

func (a *AuthServer) challenge(r *http.Request, errCode, scope string) string {
	parts := []string{`Bearer realm="probetest"`}
	if r.Header.Get("Authorization") != "" || errCode == "insufficient_scope" {
		parts = append(parts, fmt.Sprintf("error=%q", errCode))
	}
	if scope != "" && (!a.cfg.NoChallengeScope || errCode == "insufficient_scope") {
		parts = append(parts, fmt.Sprintf("scope=%q", scope))
	}
	if !a.cfg.NoResourceMetadataInChallenge && !a.cfg.Legacy20250326 {
		parts = append(parts, fmt.Sprintf("resource_metadata=%q", origin(r)+"/.well-known/oauth-protected-resource"+r.URL.Path))
	}
	return strings.Join(parts, ", ")
}

// check reads the request's bearer token and reports whether it is one this
// server issued, unexpired, for this resource.
func (a *AuthServer) check(r *http.Request) (grantedToken, bool) {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return grantedToken{}, false
	}
	a.mu.Lock()
	tok, found := a.tokens[v]
	a.mu.Unlock()
	if !found || time.Now().After(tok.expiry) {
		return grantedToken{}, false
	}
	if want := origin(r) + r.URL.Path; tok.resource != "" && !strings.HasPrefix(want, tok.resource) {
		return grantedToken{}, false
	}
	return tok, true
}

// peekMethod reads the JSON-RPC method of a POST and puts the body back.
func peekMethod(r *http.Request) string {
	if r.Method != http.MethodPost || r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInLine))
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Method
}

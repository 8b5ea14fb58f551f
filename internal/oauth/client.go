package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// expiryMargin is how long before its expiry a cached access token is
// renewed: long enough that it does not expire during a probe.
const expiryMargin = 30 * time.Second

// Credential names, the credential label of the expiry metric.
const (
	CredentialAccessToken  = "oauth_access_token"  //nolint:gosec // G101: a label value naming a kind of credential, not one
	CredentialRefreshToken = "oauth_refresh_token" //nolint:gosec // G101: a label value naming a kind of credential, not one
)

// Client is the OAuth client of one server. It caches what discovery found
// and the access token across probes; make one per server and keep it while
// the server's configuration stays the same (Cache does).
type Client struct {
	mu  sync.Mutex
	cfg Config
	srv *url.URL          // cfg.ServerURL, parsed
	net dialguard.Network // how names resolve and what is public: the system's, but in tests

	ep    *endpoints    // nil until discovered
	token *oauth2.Token // the cached access token; nil when none
	asked []string      // the scopes asked for with it

	// rotatedFrom and rotatedTo remember the last rotation, so a refresh
	// token that could not be written back is not lost while we run.
	rotatedFrom, rotatedTo string
	// refreshExpiry is when knownRT, the refresh token last seen, expires.
	knownRT       string
	refreshExpiry time.Time
	refusedToken  string // the last access token the server refused, still scrubbed
	regSecret     string // the secret of the client mcpwatch login registered, if any
	login         *LoginOutcome
	loginErr      error  // the last sign-in's failure
	who           string // the client_id last used, for messages
	lastRefresh   time.Time
	failures      map[string]uint64
	// stored is the access token mcpwatch login stored in the refresh
	// token's file when it was granted no refresh token; nil otherwise.
	stored *storedAccess
	clock  func() time.Time // time.Now, but in tests
}

func (c *Client) now() time.Time {
	if c.clock != nil {
		return c.clock()
	}
	return time.Now()
}

// takeRefreshToken takes the refresh token file's content: a refresh
// token, or an access token stored alone. The caller holds c.mu (or owns
// c).
func (c *Client) takeRefreshToken(content string) {
	c.knownRT = content
	if st, ok := parseStored(content); ok {
		c.stored, c.refreshExpiry = st, time.Time{}
		return
	}
	c.stored, c.refreshExpiry = nil, refreshTokenExpiry(nil, content)
}

// New returns the client of one server. cfg must be valid (Validate).
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.ServerURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the server URL is not a URL")
	}
	c := &Client{cfg: cfg, srv: u, failures: map[string]uint64{}}
	c.takeRefreshToken(cfg.RefreshToken)
	return c, nil
}

// update takes this probe's configuration (same key): the refresh token as
// the file holds it now.
func (c *Client) update(cfg Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg.RefreshToken != c.knownRT && cfg.RefreshToken != c.rotatedFrom {
		// Someone put another refresh token in the file (or a login
		// stored another access token there).
		c.takeRefreshToken(cfg.RefreshToken)
		if c.token != nil && c.stored != nil && c.token.AccessToken != c.stored.AccessToken {
			c.token = nil
		}
	}
	c.cfg = cfg
}

// RoundTripper implements probe.Authorizer.
func (c *Client) RoundTripper(base http.RoundTripper) http.RoundTripper {
	return &transport{c: c, base: base, origin: originOf(c.srv)}
}

// httpClient is the client of discovery and token requests over base: no
// redirects (a credential goes to the URL discovered, and no other), and
// every connection dialed within the reach of reachFor.
// The caller holds c.mu.
func (c *Client) httpClient(base http.RoundTripper, serverLocal bool) *http.Client {
	configured := c.cfg.TokenURL
	return &http.Client{
		Transport: dialguard.Transport(base, c.net, func(r *http.Request) dialguard.Reach {
			return reachFor(r.URL, serverLocal, configured)
		}),
		CheckRedirect: noRedirects,
	}
}

// reachFor is where a discovery or token request may go. A server on a
// public address over https keeps its authorization on public addresses
// over https: what it publishes cannot aim mcpwatch's client credentials at
// a loopback, private or link-local address (another local service, the
// cloud metadata address), nor send them in the clear. A server that is
// itself plain http, or on such an address, may name authorization on any
// address, over plain http only to a local one. A token_url the
// configuration names is the operator's choice and goes anywhere.
func reachFor(u *url.URL, serverLocal bool, configured string) dialguard.Reach {
	switch {
	case configured != "" && u.String() == configured:
		return dialguard.Anywhere
	case u.Scheme == "https" && serverLocal:
		return dialguard.Anywhere
	case u.Scheme == "https":
		return dialguard.Public
	case u.Scheme == "http" && serverLocal:
		return dialguard.Local
	}
	return 0
}

// serverLocal reports whether the MCP server is itself plain http or on a
// loopback, private or link-local address, looked up now: only then may
// its authorization be too. A name that does not resolve counts as public,
// the stricter rule.
func (c *Client) serverLocal(ctx context.Context) bool {
	if c.srv.Scheme == "http" {
		return true
	}
	r, err := c.net.HostReach(ctx, c.srv.Hostname())
	return err == nil && r == dialguard.Local
}

var _ probe.Authorizer = (*Client)(nil)

// Status is what is known of the client's credentials now.
func (c *Client) Status() *probe.CredentialStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &probe.CredentialStatus{OAuth: true, LastRefresh: c.lastRefresh, RefreshFailures: failureCounts(c.failures)}
	if c.token != nil && !c.token.Expiry.IsZero() && c.stored == nil {
		st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: CredentialAccessToken, Expiry: c.token.Expiry, Renewed: true})
	}
	if c.stored != nil && !c.stored.Expiry.IsZero() {
		st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: CredentialStoredAccessToken, Expiry: c.stored.Expiry})
	}
	if !c.refreshExpiry.IsZero() {
		st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: CredentialRefreshToken, Expiry: c.refreshExpiry})
	}
	return st
}

// Secrets are the values a server's answers must be scrubbed of: the
// tokens and the client secret.
func (c *Client) Secrets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []string{c.cfg.ClientSecret, c.cfg.RefreshToken, c.rotatedTo, c.refusedToken, c.regSecret}
	if c.token != nil {
		out = append(out, c.token.AccessToken, c.token.RefreshToken)
	}
	if c.stored != nil {
		out = append(out, c.stored.AccessToken)
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// failureCounts copies the counts of failed token requests with every
// reason of FailureReasons present, from 0: whoever reads the status (the
// metrics, which export each from 0 so that increase() sees the first
// failure) gets the bounded set without knowing this package.
func failureCounts(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(FailureReasons))
	for _, r := range FailureReasons {
		out[r] = m[r]
	}
	return out
}

// current is the token to send first: the cached one while it is valid, a
// new one when discovery is done and it is not, none before discovery (the
// server's 401 starts it).
func (c *Client) current(ctx context.Context, base http.RoundTripper) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stored != nil && c.cfg.Grant == GrantRefreshToken {
		// An access token stored alone: sent as it is, no discovery
		// needed, until it expires.
		tok, err := c.storedToken()
		if err != nil {
			return "", err
		}
		return tok.AccessToken, nil
	}
	if c.ep == nil {
		return "", nil
	}
	asked := c.asked
	if c.token == nil {
		asked = c.scopes(nil)
	}
	tok, err := oauth2.ReuseTokenSourceWithExpiry(c.token, fetcher(func() (*oauth2.Token, error) {
		return c.fetch(ctx, base, asked)
	}), expiryMargin).Token()
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// renew answers a 401: discovery the first time, then a new token (the
// one sent, if any, was refused).
func (c *Client) renew(ctx context.Context, base http.RoundTripper, ch *probe.Challenge, sent string) (string, error) {
	local := c.serverLocal(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stored != nil && c.cfg.Grant == GrantRefreshToken && sent == c.stored.AccessToken {
		return "", c.storedRefused(ch)
	}
	if c.ep == nil {
		ep, err := discover(ctx, c.httpClient(base, local), c.srv, local, c.cfg.TokenURL, usesAssertion(c.cfg), ch)
		if err != nil {
			c.failures[FailDiscovery]++
			return "", c.discoveryFailure(ctx, err)
		}
		c.ep = ep
	}
	if p := grantProblem(c.cfg, c.ep); p != "" {
		return "", &probe.Failure{Reason: probe.ReasonConfig, Err: fmt.Errorf("server %q: %s", c.cfg.Server, p)}
	}
	if c.token != nil && c.token.AccessToken == sent {
		c.refusedToken, c.token = sent, nil // refused: never sent again
	}
	tok, err := c.fetch(ctx, base, c.scopes(ch))
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// stepUp asks for a token with the challenge's scope added.
func (c *Client) stepUp(ctx context.Context, base http.RoundTripper, ch *probe.Challenge) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stored != nil && c.cfg.Grant == GrantRefreshToken {
		return "", c.storedShort(ch)
	}
	scopes := slices.Clone(c.asked)
	for _, s := range strings.Fields(ch.Scope) {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	tok, err := c.fetch(ctx, base, scopes)
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// alreadyAsked reports whether every scope the challenge wants was asked
// for with the current token: a step-up would ask for the same again.
func (c *Client) alreadyAsked(scope string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range strings.Fields(scope) {
		if !slices.Contains(c.asked, s) {
			return false
		}
	}
	return true
}

// scopes are what a new token asks for: the configured ones, else the
// challenge's, else the resource's scopes_supported, else none.
func (c *Client) scopes(ch *probe.Challenge) []string {
	switch {
	case len(c.cfg.Scopes) > 0:
		return c.cfg.Scopes
	case ch != nil && strings.TrimSpace(ch.Scope) != "":
		return strings.Fields(ch.Scope)
	case c.ep != nil && len(c.ep.scopesSupported) > 0:
		return c.ep.scopesSupported
	}
	return nil
}

type fetcher func() (*oauth2.Token, error)

func (f fetcher) Token() (*oauth2.Token, error) { return f() }

// fetch gets a new access token at the token endpoint and caches it; a
// rotated refresh token is written back first. The caller holds c.mu.
func (c *Client) fetch(ctx context.Context, base http.RoundTripper, scopes []string) (*oauth2.Token, error) {
	if c.stored != nil && c.cfg.Grant == GrantRefreshToken {
		// Before discovery, which a stored token does without.
		tok, err := c.storedToken()
		if err != nil {
			return nil, err
		}
		c.token = tok
		return tok, nil
	}
	ep := c.ep
	hc := c.httpClient(base, ep.serverLocal)
	if c.cfg.Grant == GrantAuthorizationCode {
		return c.signIn(ctx, hc, scopes)
	}
	refreshToken := c.refreshToken()
	if c.cfg.Grant == GrantRefreshToken && refreshToken == "" {
		return nil, &probe.Failure{Reason: probe.ReasonConfig, Err: fmt.Errorf(
			"server %q: auth.refresh_token: the file %s is empty: run 'mcpwatch login %s' to sign in and store a refresh token there",
			c.cfg.Server, c.cfg.RefreshTokenFile, c.cfg.Server)}
	}
	who, err := c.identity(ep)
	if err != nil {
		return nil, err
	}
	c.who = who.id
	cc, err := c.tokenRequest(ep, who, refreshToken, scopes)
	if err != nil {
		return nil, err
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		reason, f := c.tokenFailure(ctx, err, ep, c.cfg.Grant, who.method, scopes)
		c.failures[reason]++
		return nil, f
	}
	if err := checkTokens(tok); err != nil {
		c.failures[FailBadResponse]++
		return nil, &probe.Failure{Reason: probe.ReasonUnauthorized, Err: fmt.Errorf(
			"server %q: OAuth token endpoint %s: %w; refused", c.cfg.Server, show(ep.tokenURL), err)}
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.Type(), "Bearer") {
		c.failures[FailBadResponse]++
		return nil, &probe.Failure{Reason: probe.ReasonUnauthorized, Err: fmt.Errorf(
			"server %q: OAuth token endpoint %s issued a token of type %q, not Bearer", c.cfg.Server, show(ep.tokenURL), safeCode(strings.ToLower(tok.TokenType)))}
	}
	if c.cfg.Grant == GrantRefreshToken {
		if tok.RefreshToken != "" && tok.RefreshToken != refreshToken {
			c.rotatedFrom, c.rotatedTo = refreshToken, tok.RefreshToken
			if err := atomicfile.WriteSecret(c.cfg.RefreshTokenFile, []byte(tok.RefreshToken+"\n")); err != nil {
				// Kept in memory: the probe goes on, and the failure
				// shows in the refresh failures (reason store).
				c.failures[FailStore]++
			}
		}
		c.knownRT, c.refreshExpiry = tok.RefreshToken, refreshTokenExpiry(tok, tok.RefreshToken)
	}
	c.token, c.asked, c.lastRefresh = tok, scopes, time.Now()
	return tok, nil
}

// maxTokenBytes bounds a token the authorization server issues: a refresh
// token is written to a file and read back at every probe, an access token
// sent in every request's header.
const maxTokenBytes = 16 << 10

// checkTokens refuses an answer whose access or refresh token is not a
// token: empty, longer than maxTokenBytes, or with a byte outside visible
// ASCII (RFC 6749's token characters, less the space). A refresh token is
// written back to a file: a line break there would make the next line read
// as something else, and whatever the server put after it would be stored.
func checkTokens(tok *oauth2.Token) error {
	if err := checkToken(tok.AccessToken); err != nil {
		return fmt.Errorf("the access token it issued %w", err)
	}
	if tok.RefreshToken == "" {
		return nil
	}
	if err := checkToken(tok.RefreshToken); err != nil {
		return fmt.Errorf("the refresh token it issued %w", err)
	}
	return nil
}

func checkToken(s string) error {
	if s == "" || len(s) > maxTokenBytes {
		return fmt.Errorf("is not printable ASCII of 1 to %d bytes (it has %d)", maxTokenBytes, len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return fmt.Errorf("is not printable ASCII without spaces or line breaks (byte %d is %#02x)", i, s[i])
		}
	}
	return nil
}

// refreshToken is the refresh token to use: the file's, unless it still
// holds the one we rotated away from.
func (c *Client) refreshToken() string {
	if c.rotatedTo != "" && c.cfg.RefreshToken == c.rotatedFrom {
		return c.rotatedTo
	}
	return c.cfg.RefreshToken
}

// refreshTokenExpiry is when the refresh token expires, when it is knowable:
// stated with the token (refresh_token_expires_in, or Keycloak's
// refresh_expires_in), else the exp of a refresh token that is a JWT.
func refreshTokenExpiry(tok *oauth2.Token, rt string) time.Time {
	if tok != nil {
		for _, k := range []string{"refresh_token_expires_in", "refresh_expires_in"} {
			if n, ok := tok.Extra(k).(float64); ok && n > 0 {
				return expiryIn(time.Now(), n)
			}
		}
	}
	if exp, ok := JWTExpiry(rt); ok {
		return exp
	}
	return time.Time{}
}

func (c *Client) discoveryFailure(ctx context.Context, err error) *probe.Failure {
	reason := probe.ReasonUnauthorized
	var refused *dialguard.RefusedError
	switch {
	case errors.As(err, &refused):
		// A policy decision, not a connection problem: the server's
		// metadata leads where its credentials may not go.
	case ctx.Err() == context.DeadlineExceeded:
		reason = probe.ReasonTimeout
	case ctx.Err() != nil:
		reason = probe.ReasonCanceled
	case isTransport(err):
		reason = probe.ReasonConnection
	}
	return &probe.Failure{Reason: reason, HTTPStatus: http.StatusUnauthorized,
		Err: fmt.Errorf("server %q: OAuth discovery after HTTP 401: %s; fix the server's metadata, or set auth.token_url", c.cfg.Server, sanitize.OneLine(err.Error()))}
}

func isTransport(err error) bool {
	var te *transportError
	return asError(err, &te)
}

// refused is a 401 to a token just issued: the call itself failed.
func (c *Client) refused(ch *probe.Challenge) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	note := ""
	if ch != nil && ch.Error != "" {
		note = fmt.Sprintf(", error=%q", ch.Error)
	}
	tokenURL := ""
	if c.ep != nil {
		tokenURL = show(c.ep.tokenURL)
	}
	resource := c.resource()
	// The next probe discovers afresh: the server may have moved to
	// another authorization server.
	if c.token != nil {
		c.refusedToken = c.token.AccessToken
	}
	c.ep, c.token = nil, nil
	return &probe.Failure{Reason: probe.ReasonUnauthorized, HTTPStatus: http.StatusUnauthorized, Challenge: ch,
		Err: fmt.Errorf("server %q: the server refused an access token just issued by %s (HTTP 401%s): the call itself failed; check that the authorization server issues tokens for resource %s and that client %q may use it",
			c.cfg.Server, tokenURL, note, resource, c.clientName())}
}

// insufficient is a 403 insufficient_scope after the step-up: the token
// endpoint did not grant the scope.
func (c *Client) insufficient(ch *probe.Challenge) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	granted := ""
	if c.token != nil {
		if s, ok := c.token.Extra("scope").(string); ok {
			granted = fmt.Sprintf(", granted %q", sanitize.Truncate(s, 200))
		}
	}
	return &probe.Failure{Reason: probe.ReasonForbidden, HTTPStatus: http.StatusForbidden, Challenge: ch,
		Err: fmt.Errorf("server %q: HTTP 403 insufficient_scope: the server asks for scope %q; a token was asked for scope %q%s and is still refused (one step-up, no more); allow client %q that scope, or set auth.scopes",
			c.cfg.Server, sanitize.Truncate(ch.Scope, 200), strings.Join(c.asked, " "), granted, c.clientName())}
}

// clientName is the client_id to name in messages. The caller holds c.mu.
func (c *Client) clientName() string {
	if c.who != "" {
		return c.who
	}
	return c.cfg.ClientID
}

func (c *Client) resource() string {
	if c.ep != nil {
		return show(c.ep.resource)
	}
	return show(canonicalResource(c.srv))
}

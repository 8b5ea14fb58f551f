package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// DefaultClientMetadataURL is mcpwatch's OAuth Client ID Metadata Document:
// its client_id where an authorization server supports such documents.
// docs/oauth-client-metadata.json in the repository is the document.
const DefaultClientMetadataURL = "https://raw.githubusercontent.com/mcpwatch/mcpwatch/main/docs/oauth-client-metadata.json"

// Login is how mcpwatch login reaches the person who signs in: the
// authorization code grant with PKCE (S256), as the MCP authorization spec
// (2025-11-25) describes it for a native client.
type Login struct {
	// Browser opens the authorization URL. The URL is written to Out as
	// well, so a browser that cannot be opened is no failure.
	Browser func(ctx context.Context, url string) error
	// Out receives what the person is asked to do.
	Out io.Writer
	// ClientMetadataURL is the Client ID Metadata Document used as the
	// client_id where the authorization server supports them; default
	// DefaultClientMetadataURL.
	ClientMetadataURL string
	// RedirectPort is the loopback redirect URI's port; 0 takes a free
	// one (RFC 8252 has the authorization server accept any).
	RedirectPort int
	// Deadline is when the login gives up (its --timeout). The sign-in
	// may last until then even when the request that needed it has a
	// shorter deadline of its own; zero bounds it by that request's.
	Deadline time.Time
}

// LoginOutcome is what a login did.
type LoginOutcome struct {
	Issuer string
	// ClientID is the client signed in as; ClientBy says how it came to
	// be (ConfiguredClient, RegisteredByMetadataDocument,
	// RegisteredDynamically) and Reused whether an earlier login's.
	ClientID         string
	ClientBy         string
	Reused           bool
	RegistrationFile string // where the client is kept; "" for a configured one
	RefreshTokenFile string
	// AccessTokenOnly is set when the authorization server granted no
	// refresh token: the access token was stored in RefreshTokenFile, to
	// be used until Expiry (zero: it does not say it expires).
	// NoRefreshHint says how to get a refresh token next time.
	AccessTokenOnly bool
	Expiry          time.Time
	NoRefreshHint   string
	RedirectURI     string
	Scopes          []string // granted, as the token says, else asked
}

// LastLogin is what the client's last sign-in did; nil before one.
func (c *Client) LastLogin() *LoginOutcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.login == nil {
		return nil
	}
	o := *c.login
	return &o
}

// loginFailure is a failed step of a sign-in, named.
func (c *Client) loginFailure(reason probe.Reason, step, format string, args ...any) *probe.Failure {
	return &probe.Failure{Reason: reason, Err: fmt.Errorf("server %q: login, %s: %s", c.cfg.Server, step, fmt.Sprintf(format, args...))}
}

// signIn is the authorization code grant: the client (configured, a Client
// ID Metadata Document, or registered), a loopback redirect, the browser,
// the code exchanged with its PKCE verifier, the refresh token stored. The
// caller holds c.mu, for as long as the person takes (within ctx).
func (c *Client) signIn(ctx context.Context, hc *http.Client, scopes []string) (*oauth2.Token, error) {
	ep := c.ep
	d := discovery{hc: hc, local: ep.serverLocal}
	au, err := url.Parse(ep.authorizationURL)
	switch {
	case ep.authorizationURL == "" || err != nil || au.Host == "":
		return nil, c.loginFailure(probe.ReasonUnauthorized, "discovery", "the authorization server (%s) publishes no authorization_endpoint: it offers no sign-in in a browser", ep.found)
	case !d.acceptable(au):
		return nil, c.loginFailure(probe.ReasonUnauthorized, "discovery", "the authorization endpoint %s is not https (%s)", show(ep.authorizationURL), plainHTTPRule)
	case len(ep.grants) > 0 && !slices.Contains(ep.grants, GrantAuthorizationCode):
		return nil, c.loginFailure(probe.ReasonConfig, "discovery", "the authorization server does not offer grant authorization_code (it offers %s): there is nothing to sign in to; use grant client_credentials",
			strings.Join(boundList(ep.grants), ", "))
	case !slices.Contains(ep.pkceMethods, "S256"):
		return nil, c.loginFailure(probe.ReasonUnauthorized, "discovery", "the authorization server's metadata does not list S256 in code_challenge_methods_supported, and the MCP authorization spec forbids signing in without PKCE")
	}

	if ctx.Err() != nil && c.loginErr != nil {
		// The login's deadline passed in an earlier sign-in of this probe
		// (the era detection's request, tried again as initialize): its
		// failure is the one to report, and no browser opens again.
		return nil, c.loginErr
	}
	tok, err := c.signInOnce(ctx, hc, scopes)
	c.loginErr = err
	return tok, err
}

func (c *Client) signInOnce(ctx context.Context, hc *http.Client, scopes []string) (*oauth2.Token, error) {
	ep := c.ep
	who, out, cb, err := c.loginClient(ctx, hc, ep)
	if err != nil {
		return nil, err
	}
	defer cb.close()
	if ep.offlineAccess && !slices.Contains(scopes, "offline_access") {
		// A refresh token is the point of signing in; a server that does
		// not list offline_access is not asked for it.
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	verifier := oauth2.GenerateVerifier()
	cb.state, cb.issuer, cb.issRequired = rand.Text(), ep.issuer, ep.issParameter
	style, err := c.authenticate(ep, who, url.Values{})
	if err != nil {
		return nil, err
	}
	conf := &oauth2.Config{
		ClientID: who.id,
		Endpoint: oauth2.Endpoint{AuthURL: ep.authorizationURL, TokenURL: ep.tokenURL, AuthStyle: style},
		Scopes:   scopes, RedirectURL: cb.redirect,
	}
	if who.method == AuthClientSecretBasic || who.method == AuthClientSecretPost {
		conf.ClientSecret = who.secret
	}
	resource := oauth2.SetAuthURLParam("resource", ep.resource)
	// The authorization endpoint is the server's choice, and x/oauth2
	// keeps it as written: C1 controls or bidirectional overrides in it
	// would act on the terminal it is printed to, or show another URL
	// than the one opened.
	authURL := printableURL(conf.AuthCodeURL(cb.state, oauth2.S256ChallengeOption(verifier), resource))

	l := c.cfg.Login
	wait := "until the sign-in finishes"
	if dl, ok := ctx.Deadline(); ok {
		wait = "up to " + time.Until(dl).Round(time.Second).String()
	}
	fmt.Fprintf(l.Out, "Sign in to %s in a browser: open this URL if one does not open by itself (waiting %s):\n\n  %s\n\n", c.cfg.Server, wait, authURL)
	// The browser is opened at the listener's start page, which sends it
	// on to authURL: the state and the PKCE challenge stay out of the
	// opener's and the browser's command lines (see callback).
	cb.authURL.Store(&authURL)
	if err := l.Browser(ctx, cb.start); err != nil {
		fmt.Fprintf(l.Out, "(no browser opened: %s)\n", sanitize.OneLine(err.Error()))
	}

	answer, err := cb.wait(ctx)
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			return nil, c.loginFailure(probe.ReasonCanceled, "authorization", "the login was canceled before an answer came back to the redirect URI %s", cb.redirect)
		}
		ignored := ""
		if n := cb.strangers.Load(); n > 0 {
			ignored = fmt.Sprintf("; requests to the redirect URI with another state than this sign-in's were ignored: %d", n)
		}
		return nil, c.loginFailure(probe.ReasonTimeout, "authorization",
			"no answer came back to the redirect URI %s before the deadline: finish signing in in the browser (the URL is above), or allow more time with --timeout; "+
				"an authorization server that shows an error page instead of sending the browser back does not accept that redirect URI: register http://127.0.0.1%s (any port, RFC 8252) for client %q, or pass --redirect-port%s",
			cb.redirect, callbackPath, who.id, ignored)
	}
	switch answer.kind {
	case "denied":
		return nil, c.loginFailure(probe.ReasonUnauthorized, "authorization",
			"consent was denied in the browser (%s): run 'mcpwatch login %s' again and allow access, or ask the authorization server's administrator why client %q is refused", answer.problem, c.cfg.Server, who.id)
	case "issuer":
		return nil, c.loginFailure(probe.ReasonUnauthorized, "authorization",
			"%s: run 'mcpwatch login %s' again, and open only the URL it prints", answer.problem, c.cfg.Server)
	case "start":
		return nil, c.loginFailure(probe.ReasonUnauthorized, "authorization",
			"%s: run 'mcpwatch login %s' again", answer.problem, c.cfg.Server)
	case "error":
		hint := "see the authorization server's documentation for this error"
		switch answer.errCode {
		case FailInvalidScope:
			hint = fmt.Sprintf("scope %q is not allowed for this client: set auth.scopes to what it may ask for", strings.Join(scopes, " "))
		case FailUnauthorizedClient, "invalid_request":
			hint = fmt.Sprintf("check that client %q may use the authorization code grant with redirect URI %s", who.id, cb.redirect)
		}
		return nil, c.loginFailure(probe.ReasonUnauthorized, "authorization", "%s; %s", answer.problem, hint)
	}

	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), resource}
	if who.method == AuthPrivateKeyJWT {
		params := url.Values{}
		if _, err := c.authenticate(ep, who, params); err != nil {
			return nil, err
		}
		for k := range params {
			opts = append(opts, oauth2.SetAuthURLParam(k, params.Get(k)))
		}
	}
	tok, err := conf.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), answer.code, opts...)
	if err != nil {
		_, f := c.tokenFailure(ctx, err, ep, GrantAuthorizationCode, who.method, scopes)
		return nil, c.loginFailure(f.Reason, "token exchange", "%s", strings.TrimPrefix(f.Err.Error(), fmt.Sprintf("server %q: ", c.cfg.Server)))
	}
	if err := checkTokens(tok); err != nil {
		return nil, c.loginFailure(probe.ReasonUnauthorized, "token exchange", "the token endpoint %s: %v; refused", show(ep.tokenURL), err)
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.Type(), "Bearer") {
		return nil, c.loginFailure(probe.ReasonUnauthorized, "token exchange", "the token endpoint issued a token of type %q, not Bearer", safeCode(strings.ToLower(tok.TokenType)))
	}
	if tok.RefreshToken == "" {
		// An access token alone is a sign-in too: it is stored where the
		// refresh token would be, and used until it expires.
		st := &storedAccess{Kind: storedKind, AccessToken: tok.AccessToken, Expiry: accessTokenExpiry(tok), Issuer: ep.issuer}
		if err := storeAccessToken(c.cfg.RefreshTokenFile, st); err != nil {
			return nil, c.loginFailure(probe.ReasonConfig, "store", "could not store the access token: %v; make the directory writable, or point auth.refresh_token elsewhere", err)
		}
		out.AccessTokenOnly, out.Expiry = true, st.Expiry
		out.NoRefreshHint = "allow client " + strconv.Quote(who.id) + " refresh tokens on the authorization server"
		if !ep.offlineAccess {
			out.NoRefreshHint += ", or ask for offline_access (auth.scopes) if it issues them only then"
		}
		if st.Expiry.IsZero() {
			tok.Expiry = time.Time{}
		} else {
			tok.Expiry = st.Expiry
		}
	} else if err := atomicfile.WriteSecret(c.cfg.RefreshTokenFile, []byte(tok.RefreshToken+"\n")); err != nil {
		return nil, c.loginFailure(probe.ReasonConfig, "store", "could not store the refresh token: %v; make the directory writable, or point auth.refresh_token elsewhere", err)
	}
	if who.reg != nil {
		// A document's client is kept like a registered one: the daemon
		// needs its client_id (a registered one was kept at registration).
		file := RegistrationFile(c.cfg.RefreshTokenFile)
		if err := writeRegistration(file, who.reg); err != nil {
			return nil, c.loginFailure(probe.ReasonConfig, "store", "could not keep the client: %v", err)
		}
		out.RegistrationFile = file
	}
	out.RefreshTokenFile, out.RedirectURI, out.Issuer, out.Scopes = c.cfg.RefreshTokenFile, cb.redirect, ep.issuer, scopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		out.Scopes = strings.Fields(sanitize.Truncate(s, 1000))
	}
	c.login, c.who = out, who.id
	c.knownRT, c.refreshExpiry = tok.RefreshToken, refreshTokenExpiry(tok, tok.RefreshToken)
	c.rotatedTo = tok.RefreshToken // a secret to scrub from here on
	c.token, c.asked, c.lastRefresh = tok, scopes, time.Now()
	return tok, nil
}

// loginClient is the client to sign in as, and the loopback listener its
// redirect URI names: the configured client; else the client an earlier
// login kept beside the refresh token; else a Client ID Metadata Document
// where the authorization server supports them; else one registered now
// (RFC 7591), kept (0600) for the daemon and the next login.
func (c *Client) loginClient(ctx context.Context, hc *http.Client, ep *endpoints) (identity, *LoginOutcome, *callback, error) {
	l := c.cfg.Login
	listen := func(port int) (*callback, error) {
		cb, err := listenCallback(port)
		if err != nil {
			return nil, c.loginFailure(probe.ReasonConfig, "redirect", "cannot listen on 127.0.0.1:%d for the authorization server's answer: %v", port, err)
		}
		return cb, nil
	}
	if c.cfg.ClientID != "" {
		cb, err := listen(l.RedirectPort)
		if err != nil {
			return identity{}, nil, nil, err
		}
		who := identity{id: c.cfg.ClientID, secret: c.cfg.ClientSecret, method: chooseAuthMethod(c.cfg, ep)}
		return who, &LoginOutcome{ClientID: who.id, ClientBy: ConfiguredClient}, cb, nil
	}

	file := RegistrationFile(c.cfg.RefreshTokenFile)
	kept, err := readRegistration(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(l.Out, "(the client kept in %s is not used: %s)\n", file, sanitize.OneLine(err.Error()))
	}
	if kept != nil && (kept.Issuer == "" || trimSlash(kept.Issuer) == trimSlash(ep.issuer)) {
		switch kept.RegisteredBy {
		case RegisteredByMetadataDocument:
			if ep.cimd {
				if cb, err := listen(l.RedirectPort); err == nil {
					return identityOf(kept), &LoginOutcome{ClientID: kept.ClientID, ClientBy: kept.RegisteredBy, Reused: true}, cb, nil
				}
			}
		case RegisteredDynamically:
			// Registered with one redirect URI, port included: reused when
			// that port is free, else registered anew.
			if port := redirectPort(kept.RedirectURIs); port > 0 {
				if cb, err := listenCallback(port); err == nil {
					return identityOf(kept), &LoginOutcome{ClientID: kept.ClientID, ClientBy: kept.RegisteredBy, Reused: true, RegistrationFile: file}, cb, nil
				}
			}
		}
	}

	cb, err := listen(l.RedirectPort)
	if err != nil {
		return identity{}, nil, nil, err
	}
	fail := func(err error) (identity, *LoginOutcome, *callback, error) {
		cb.close()
		return identity{}, nil, nil, err
	}
	if ep.cimd {
		doc := l.ClientMetadataURL
		if doc == "" {
			doc = DefaultClientMetadataURL
		}
		reg := &registration{Issuer: ep.issuer, ClientID: doc, AuthMethod: AuthNone, RegisteredBy: RegisteredByMetadataDocument}
		return identityOf(reg), &LoginOutcome{ClientID: doc, ClientBy: RegisteredByMetadataDocument}, cb, nil
	}
	if ep.registrationURL == "" {
		return fail(c.loginFailure(probe.ReasonConfig, "client registration",
			"no client_id is configured, and the authorization server offers neither Client ID Metadata Documents nor dynamic client registration: "+
				"register a client for mcpwatch with it (redirect URI http://127.0.0.1%s, any port; or a fixed one with --redirect-port) and set auth.client_id (and client_secret)", callbackPath))
	}
	reg, err := c.register(ctx, hc, ep, cb.redirect)
	if err != nil {
		return fail(err)
	}
	if err := writeRegistration(file, reg); err != nil {
		return fail(c.loginFailure(probe.ReasonConfig, "client registration", "registered client %q, but could not keep it: %v", reg.ClientID, err))
	}
	return identityOf(reg), &LoginOutcome{ClientID: reg.ClientID, ClientBy: RegisteredDynamically, RegistrationFile: file}, cb, nil
}

func identityOf(r *registration) identity {
	method := r.AuthMethod
	if method == "" {
		method = AuthNone
		if r.ClientSecret != "" {
			method = AuthClientSecretBasic
		}
	}
	return identity{id: r.ClientID, secret: r.ClientSecret, method: method, reg: r}
}

// redirectPort is the port of a kept loopback redirect URI; 0 for none.
func redirectPort(uris []string) int {
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() != "127.0.0.1" {
			continue
		}
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p < 65536 {
			return p
		}
	}
	return 0
}

// registrationRequest is RFC 7591's client metadata, as mcpwatch asks.
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// registrationResponse is RFC 7591's answer, the fields used.
type registrationResponse struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	SecretExpiresAt         int64  `json:"client_secret_expires_at"`
	Error                   string `json:"error"`
	ErrorDescription        string `json:"error_description"`
}

// register is RFC 7591 dynamic client registration of a public client
// with one loopback redirect URI.
func (c *Client) register(ctx context.Context, hc *http.Client, ep *endpoints, redirect string) (*registration, error) {
	step := "client registration at " + show(ep.registrationURL)
	ru, err := url.Parse(ep.registrationURL)
	if err != nil || ru.Host == "" || !(discovery{local: ep.serverLocal}).acceptable(ru) {
		return nil, c.loginFailure(probe.ReasonUnauthorized, step, "not an https URL (%s)", plainHTTPRule)
	}
	body, _ := json.Marshal(registrationRequest{
		ClientName: "mcpwatch", ClientURI: "https://github.com/mcpwatch/mcpwatch",
		RedirectURIs: []string{redirect}, GrantTypes: []string{GrantAuthorizationCode, GrantRefreshToken},
		ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: AuthNone,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.registrationURL, bytes.NewReader(body))
	if err != nil {
		return nil, c.loginFailure(probe.ReasonConfig, step, "%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		reason := probe.ReasonConnection
		var refused *dialguard.RefusedError
		switch {
		case errors.As(err, &refused):
			reason = probe.ReasonUnauthorized
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			reason = probe.ReasonTimeout
		case ctx.Err() != nil:
			reason = probe.ReasonCanceled
		}
		return nil, c.loginFailure(reason, step, "%s", sanitize.OneLine(stripURLError(err, err.Error())))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return nil, c.loginFailure(probe.ReasonConnection, step, "reading the answer: %v", err)
	}
	var r registrationResponse
	decodeErr := json.Unmarshal(b, &r)
	switch {
	case resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK:
		what := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if code := safeCode(r.Error); decodeErr == nil && code != "" {
			what += ", error " + code
			if d := sanitize.OneLine(sanitize.Truncate(r.ErrorDescription, 200)); d != "" {
				what += fmt.Sprintf(" (%q)", d)
			}
		}
		return nil, c.loginFailure(probe.ReasonUnauthorized, step,
			"the authorization server refused to register mcpwatch (%s): register a client for it by hand (redirect URI http://127.0.0.1%s, any port) and set auth.client_id", what, callbackPath)
	case len(b) > maxMetadataBytes || decodeErr != nil:
		return nil, c.loginFailure(probe.ReasonUnauthorized, step, "the answer is not a JSON client registration")
	case checkToken(r.ClientID) != nil || len(r.ClientID) > 1024:
		return nil, c.loginFailure(probe.ReasonUnauthorized, step, "the answer's client_id is missing or not printable ASCII")
	case r.ClientSecret != "" && checkToken(r.ClientSecret) != nil:
		return nil, c.loginFailure(probe.ReasonUnauthorized, step, "the answer's client_secret is not printable ASCII")
	}
	method := r.TokenEndpointAuthMethod
	switch {
	case method == "" && r.ClientSecret != "":
		method = AuthClientSecretBasic
	case method == "":
		method = AuthNone
	case method != AuthNone && method != AuthClientSecretBasic && method != AuthClientSecretPost:
		return nil, c.loginFailure(probe.ReasonUnauthorized, step, "the authorization server registered mcpwatch for token endpoint authentication %q, which it cannot do", safeCode(method))
	}
	c.regSecret = r.ClientSecret
	return &registration{Issuer: ep.issuer, ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: method,
		RedirectURIs: []string{redirect}, RegisteredBy: RegisteredDynamically, SecretExpiresAt: r.SecretExpiresAt}, nil
}

// printableURL percent-encodes every byte of a URL outside visible ASCII
// (controls, spaces, and all of UTF-8 past ASCII, so C1 controls and
// bidirectional overrides too). A browser sends a path or query so
// encoded as it would have sent the characters: the URL means the same,
// and printed it is what it is.
func printableURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

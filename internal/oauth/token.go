package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Reasons a token request failed: the reason label of
// mcpwatch_credential_refresh_failures_total, a fixed set. The OAuth error
// codes of RFC 6749 section 5.2 are their own reasons; another code is
// oauth_error. A request that failed on the wire fails with the probe's
// word for it (probe.Reason).
const (
	FailInvalidGrant         = "invalid_grant"                // the refresh token is expired or revoked
	FailInvalidClient        = "invalid_client"               // client authentication failed
	FailInvalidScope         = "invalid_scope"                // a scope asked for is not allowed
	FailUnauthorizedClient   = "unauthorized_client"          // the client may not use the grant
	FailUnsupportedGrantType = "unsupported_grant_type"       // the server does not offer the grant
	FailOAuthError           = "oauth_error"                  // another OAuth error code
	FailHTTPStatus           = string(probe.ReasonHTTPStatus) // an error status without an OAuth error code
	FailBadResponse          = "bad_response"                 // an answer that is not a token
	FailConnection           = string(probe.ReasonConnection) // no answer: dial, TLS, reset
	FailTimeout              = string(probe.ReasonTimeout)    // the probe's deadline passed
	FailDiscovery            = "discovery"                    // the token endpoint could not be found
	FailStore                = "store"                        // a rotated refresh token could not be written back
)

// FailureReasons lists every reason, for metrics that must be bounded.
var FailureReasons = []string{
	FailInvalidGrant, FailInvalidClient, FailInvalidScope, FailUnauthorizedClient,
	FailUnsupportedGrantType, FailOAuthError, FailHTTPStatus, FailBadResponse,
	FailConnection, FailTimeout, FailDiscovery, FailStore,
}

// assertionLifetime is how long a private_key_jwt client assertion is
// valid: one token request.
const assertionLifetime = 2 * time.Minute

// tokenRequest builds the x/oauth2 client credentials config of one token
// request: the grant (client_credentials, or refresh_token by overriding
// grant_type, which that package allows), the client authentication, the
// resource and the scopes.
func (c *Client) tokenRequest(ep *endpoints, who identity, refreshToken string, scopes []string) (*clientcredentials.Config, error) {
	cc := &clientcredentials.Config{
		ClientID:       who.id,
		TokenURL:       ep.tokenURL,
		Scopes:         scopes,
		EndpointParams: url.Values{"resource": {ep.resource}},
	}
	var err error
	if cc.AuthStyle, err = c.authenticate(ep, who, cc.EndpointParams); err != nil {
		return nil, err
	}
	if who.method == AuthClientSecretBasic || who.method == AuthClientSecretPost {
		cc.ClientSecret = who.secret
	}
	if c.cfg.Grant == GrantRefreshToken {
		cc.EndpointParams.Set("grant_type", GrantRefreshToken)
		cc.EndpointParams.Set("refresh_token", refreshToken)
	}
	return cc, nil
}

// assertionClaims are an RFC 7523 client assertion's claims, its audience
// a single string: RFC 7523 as updated for OAuth 2.1
// (draft-ietf-oauth-rfc7523bis) makes it the authorization server's issuer
// identifier alone, where jwt.RegisteredClaims would write an array.
type assertionClaims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  string           `json:"aud"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ExpiresAt *jwt.NumericDate `json:"exp"`
	ID        string           `json:"jti"`
}

func (c assertionClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c assertionClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c assertionClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c assertionClaims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c assertionClaims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c assertionClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}

// authenticate sets up the client authentication of a token request: the
// style (basic: the header; otherwise the form), and for private_key_jwt
// the assertion, added to params.
func (c *Client) authenticate(ep *endpoints, who identity, params url.Values) (oauth2.AuthStyle, error) {
	switch who.method {
	case AuthClientSecretBasic:
		return oauth2.AuthStyleInHeader, nil
	case AuthPrivateKeyJWT:
		signed, err := clientAssertion(c.cfg, ep.issuer)
		if err != nil {
			return 0, &probe.Failure{Reason: probe.ReasonConfig,
				Err: fmt.Errorf("server %q: auth.private_key_file %s: %w; give a PEM RSA, EC or Ed25519 private key", c.cfg.Server, c.cfg.PrivateKeyFile, err)}
		}
		params.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		params.Set("client_assertion", signed)
	}
	return oauth2.AuthStyleInParams, nil
}

// clientAssertion signs a private_key_jwt client assertion addressed to the
// authorization server's issuer: never to the token endpoint, which RFC
// 7523bis no longer accepts as an audience.
func clientAssertion(cfg Config, issuer string) (string, error) {
	if issuer == "" {
		return "", errors.New("the authorization server's issuer is unknown")
	}
	key, method, err := signingKey(cfg.PrivateKey)
	if err != nil {
		return "", err
	}
	now := time.Now()
	claims := assertionClaims{
		Issuer: cfg.ClientID, Subject: cfg.ClientID, Audience: issuer,
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID: rand.Text(),
	}
	tok := jwt.NewWithClaims(method, claims)
	if cfg.KeyID != "" {
		tok.Header["kid"] = cfg.KeyID
	}
	return tok.SignedString(key)
}

// signingKey reads a PEM private key and picks its JWS algorithm.
func signingKey(pemBytes []byte) (any, jwt.SigningMethod, error) {
	if k, err := jwt.ParseRSAPrivateKeyFromPEM(pemBytes); err == nil {
		return k, jwt.SigningMethodRS256, nil
	}
	if k, err := jwt.ParseECPrivateKeyFromPEM(pemBytes); err == nil {
		switch k.Curve.Params().BitSize {
		case 384:
			return k, jwt.SigningMethodES384, nil
		case 521:
			return k, jwt.SigningMethodES512, nil
		}
		return k, jwt.SigningMethodES256, nil
	}
	if k, err := jwt.ParseEdPrivateKeyFromPEM(pemBytes); err == nil {
		return k, jwt.SigningMethodEdDSA, nil
	}
	return nil, nil, errors.New("not a PEM private key")
}

// usesAssertion reports whether the client authenticates with a
// private_key_jwt assertion, which needs the issuer.
func usesAssertion(cfg Config) bool {
	return cfg.AuthMethod == AuthPrivateKeyJWT || (cfg.AuthMethod == "" && (len(cfg.PrivateKey) > 0 || cfg.PrivateKeyFile != ""))
}

// chooseAuthMethod picks the client authentication: the configured one;
// else private_key_jwt with a key, none without a secret; else basic unless
// the server lists only client_secret_post (RFC 8414's default is basic).
func chooseAuthMethod(cfg Config, ep *endpoints) string {
	switch {
	case cfg.AuthMethod != "":
		return cfg.AuthMethod
	case len(cfg.PrivateKey) > 0 || cfg.PrivateKeyFile != "":
		return AuthPrivateKeyJWT
	case cfg.ClientSecret == "":
		return AuthNone
	case len(ep.authMethods) > 0 && !slices.Contains(ep.authMethods, AuthClientSecretBasic) && slices.Contains(ep.authMethods, AuthClientSecretPost):
		return AuthClientSecretPost
	}
	return AuthClientSecretBasic
}

// grantProblem says why the configured grant cannot work with this
// authorization server, from its grant_types_supported; "" when it can (or
// the server does not say).
func grantProblem(cfg Config, ep *endpoints) string {
	if len(ep.grants) == 0 || slices.Contains(ep.grants, cfg.Grant) {
		return ""
	}
	if cfg.Grant == GrantClientCredentials && slices.Contains(ep.grants, GrantAuthorizationCode) {
		return fmt.Sprintf("the authorization server offers only %s, not client_credentials: a person signs in once; "+
			"set auth: {grant: refresh_token, refresh_token: \"${file:PATH}\"} and run 'mcpwatch login %s' to sign in in a browser and store the refresh token there",
			strings.Join(boundList(ep.grants), ", "), cfg.Server)
	}
	return fmt.Sprintf("the authorization server does not offer grant %s (it offers %s); change auth.grant", cfg.Grant, strings.Join(boundList(ep.grants), ", "))
}

// tokenFailure names what went wrong at the token endpoint, and the reason
// it counts under.
func (c *Client) tokenFailure(ctx context.Context, err error, ep *endpoints, grant, method string, scopes []string) (string, *probe.Failure) {
	where := fmt.Sprintf("server %q: OAuth token endpoint %s (grant %s, %s)", c.cfg.Server, show(ep.tokenURL), grant, method)
	var re *oauth2.RetrieveError
	var te *transportError
	var refused *dialguard.RefusedError
	switch {
	case errors.As(err, &refused):
		return FailDiscovery, &probe.Failure{Reason: probe.ReasonUnauthorized, Err: fmt.Errorf(
			"%s: %s; the MCP server is on a public address, so its authorization server's token endpoint must be too: fix the authorization server's metadata, or set auth.token_url",
			where, sanitize.OneLine(refused.Error()))}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return FailTimeout, &probe.Failure{Reason: probe.ReasonTimeout, Err: fmt.Errorf("%s: no answer before the probe's deadline", where)}
	case ctx.Err() != nil:
		return FailConnection, &probe.Failure{Reason: probe.ReasonCanceled, Err: fmt.Errorf("%s: %w", where, ctx.Err())}
	case errors.As(err, &re):
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		code := safeCode(re.ErrorCode)
		if code == "" {
			return FailHTTPStatus, &probe.Failure{Reason: probe.ReasonUnauthorized, HTTPStatus: status,
				Err: fmt.Errorf("%s: HTTP %d without an OAuth error code; check token_url and the authorization server", where, status)}
		}
		reason := FailOAuthError
		if slices.Contains(FailureReasons[:5], code) {
			reason = code
		}
		f := &probe.Failure{Reason: probe.ReasonUnauthorized, HTTPStatus: status,
			Err: fmt.Errorf("%s: error %s (HTTP %d); %s", where, code, status, c.tokenHint(code, ep, grant, scopes))}
		if code == FailInvalidScope {
			f.Reason = probe.ReasonForbidden
		}
		return reason, f
	case errors.As(err, &te), isNetError(err):
		msg := err.Error()
		if te != nil {
			msg = te.Error()
		}
		return FailConnection, &probe.Failure{Reason: probe.ReasonConnection, Err: fmt.Errorf("%s: %s", where, sanitize.OneLine(stripURLError(err, msg)))}
	}
	return FailBadResponse, &probe.Failure{Reason: probe.ReasonUnauthorized,
		Err: fmt.Errorf("%s: the answer is not a token (%s)", where, sanitize.OneLine(stripURLError(err, err.Error())))}
}

func (c *Client) tokenHint(code string, ep *endpoints, grant string, scopes []string) string {
	switch code {
	case FailInvalidClient:
		h := fmt.Sprintf("the authorization server did not accept client %q: check client_id and its secret or key", c.clientName())
		if len(ep.authMethods) > 0 {
			h += fmt.Sprintf(" (it accepts %s; auth.auth_method picks one)", strings.Join(boundList(ep.authMethods), ", "))
		}
		return h
	case FailInvalidGrant:
		switch grant {
		case GrantRefreshToken:
			return fmt.Sprintf("the refresh token in %s is expired or revoked: run 'mcpwatch login %s' to sign in again and store a new one there", c.cfg.RefreshTokenFile, c.cfg.Server)
		case GrantAuthorizationCode:
			return "the authorization server refused the code it had just issued (expired, used already, or the PKCE verifier or redirect URI did not match): run 'mcpwatch login' again"
		}
		return "the authorization server refused the grant"
	case FailInvalidScope:
		return fmt.Sprintf("scope %q is not allowed for this client; set auth.scopes to what it may ask for", strings.Join(scopes, " "))
	case FailUnauthorizedClient, FailUnsupportedGrantType:
		h := fmt.Sprintf("client %q may not use grant %s; allow it on the authorization server", c.clientName(), grant)
		if code == FailUnsupportedGrantType {
			h = fmt.Sprintf("the authorization server does not support grant %s", grant)
		}
		if grant == GrantClientCredentials {
			h += "; if it offers only browser sign-in (authorization code), set auth: {grant: refresh_token, refresh_token: \"${file:PATH}\"} and run 'mcpwatch login " + c.cfg.Server + "' to sign in once"
		}
		return h
	}
	return "see the authorization server's documentation for this error"
}

// safeCode keeps an OAuth error code only when it looks like one: the
// server chose it, and it goes into messages.
func safeCode(code string) string {
	if code == "" || len(code) > 64 {
		return ""
	}
	for _, r := range code {
		if (r < 'a' || r > 'z') && r != '_' && (r < '0' || r > '9') {
			return ""
		}
	}
	return code
}

func boundList(list []string) []string {
	out := make([]string, 0, min(len(list), 8))
	for _, s := range list {
		if len(out) == 8 {
			break
		}
		if c := safeCode(strings.ReplaceAll(strings.ReplaceAll(s, "-", "_"), ":", "_")); c != "" {
			out = append(out, s)
		}
	}
	return out
}

func isNetError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// stripURLError drops the *url.Error's repetition of the URL (and query).
func stripURLError(err error, msg string) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return msg
}

// noRedirects refuses redirects for token and metadata requests: a
// credential goes to the URL that was discovered, and no other.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

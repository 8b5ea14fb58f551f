package oauth

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// An authorization server may grant an access token without a refresh
// token (a GitHub OAuth App's never expires; others live for hours or
// days). mcpwatch login then stores that access token in the refresh
// token's file, marked so that it is not sent to the token endpoint as a
// refresh token, and check and serve use it as it is until it expires.

// CredentialStoredAccessToken names an access token mcpwatch login stored
// because no refresh token was granted: the credential label of the expiry
// metric. Unlike oauth_access_token, mcpwatch cannot renew it, so its
// expiry is one to warn of (McpCredentialExpiringSoon).
const CredentialStoredAccessToken = "oauth_stored_access_token" //nolint:gosec // G101: a label value naming a kind of credential, not one

// storedKind marks the file's JSON as mcpwatch's: a refresh token is
// printable ASCII without spaces or quotes, so it never reads as this.
const storedKind = "mcpwatch-access-token"

// storedAccess is the content of a refresh token file that holds an access
// token alone: one line of JSON.
type storedAccess struct {
	Kind        string    `json:"kind"`
	AccessToken string    `json:"access_token"`
	Expiry      time.Time `json:"expiry,omitzero"` // zero: the token does not say it expires
	Issuer      string    `json:"issuer,omitempty"`
}

// parseStored reads a refresh token file's content as a stored access
// token; ok is false for a refresh token (anything else).
func parseStored(content string) (*storedAccess, bool) {
	s := strings.TrimSpace(content)
	if !strings.HasPrefix(s, "{") || !strings.Contains(s, storedKind) {
		return nil, false
	}
	var st storedAccess
	if err := json.Unmarshal([]byte(s), &st); err != nil || st.Kind != storedKind || checkToken(st.AccessToken) != nil {
		return nil, false
	}
	return &st, true
}

// accessTokenExpiry is when an access token granted alone expires: its
// expires_in (x/oauth2 has made it Expiry), else the exp of a token that
// is a JWT, else never (zero).
func accessTokenExpiry(tok *oauth2.Token) time.Time {
	if !tok.Expiry.IsZero() {
		return tok.Expiry
	}
	if exp, ok := JWTExpiry(tok.AccessToken); ok {
		return exp
	}
	return time.Time{}
}

// storeAccessToken writes an access token granted alone to the refresh
// token's file, as a refresh token is written: atomically, mode 0600,
// never through a symbolic link.
func storeAccessToken(file string, st *storedAccess) error {
	b, err := json.Marshal(st) //nolint:gosec // G117: the token is meant for this file, written 0600 as a refresh token is
	if err != nil {
		return err
	}
	return atomicfile.WriteSecret(file, append(b, '\n'))
}

// storedToken is the stored access token as the token to send, or
// credential_missing once it has expired: without a refresh token there
// is no other to get, and a person must sign in again. The caller holds
// c.mu.
func (c *Client) storedToken() (*oauth2.Token, error) {
	st := c.stored
	if !st.Expiry.IsZero() && !c.now().Before(st.Expiry) {
		return nil, &probe.Failure{Reason: probe.ReasonCredentialMissing, Err: fmt.Errorf(
			"server %q: the access token 'mcpwatch login' stored in %s expired at %s, and the authorization server granted no refresh token to renew it: run 'mcpwatch login %s' to sign in again",
			c.cfg.Server, c.cfg.RefreshTokenFile, st.Expiry.UTC().Format(time.RFC3339), c.cfg.Server)}
	}
	return &oauth2.Token{AccessToken: st.AccessToken, TokenType: "Bearer", Expiry: st.Expiry}, nil
}

// storedRefused is a 401 to the stored access token: revoked, or expired
// earlier than it said. Only a new sign-in gets another.
func (c *Client) storedRefused(ch *probe.Challenge) error {
	note := ""
	if ch != nil && ch.Error != "" {
		note = fmt.Sprintf(", error=%q", safeCode(ch.Error))
	}
	return &probe.Failure{Reason: probe.ReasonUnauthorized, HTTPStatus: 401, Challenge: ch, Err: fmt.Errorf(
		"server %q: the server refused the access token 'mcpwatch login' stored in %s (HTTP 401%s), and without a refresh token there is no other to get: run 'mcpwatch login %s' to sign in again",
		c.cfg.Server, c.cfg.RefreshTokenFile, note, c.cfg.Server)}
}

// storedShort is a 403 insufficient_scope to the stored access token: no
// refresh token can ask for more, so a person signs in again with the
// scope the server names.
func (c *Client) storedShort(ch *probe.Challenge) error {
	scope := sanitize.Truncate(ch.Scope, 200)
	return &probe.Failure{Reason: probe.ReasonForbidden, HTTPStatus: 403, Challenge: ch, Err: fmt.Errorf(
		"server %q: HTTP 403 insufficient_scope: the server asks for scope %q, and the access token 'mcpwatch login' stored in %s cannot be renewed with more (no refresh token): set auth.scopes to %q and run 'mcpwatch login %s' again",
		c.cfg.Server, scope, c.cfg.RefreshTokenFile, scope, c.cfg.Server)}
}

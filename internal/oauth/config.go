package oauth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/oauthspec"
)

// Grants and client authentication methods: oauthspec's, which the
// configuration checks an auth: block against.
const (
	GrantClientCredentials = oauthspec.GrantClientCredentials
	GrantRefreshToken      = oauthspec.GrantRefreshToken
	GrantAuthorizationCode = oauthspec.GrantAuthorizationCode

	AuthClientSecretBasic = oauthspec.AuthClientSecretBasic
	AuthClientSecretPost  = oauthspec.AuthClientSecretPost
	AuthPrivateKeyJWT     = oauthspec.AuthPrivateKeyJWT
	AuthNone              = oauthspec.AuthNone
)

// Grants and AuthMethods list the accepted values.
var (
	Grants      = oauthspec.Grants
	AuthMethods = oauthspec.AuthMethods
)

// Config is one server's OAuth client, its secrets as read for this probe.
type Config struct {
	Server    string // the server's name, for messages
	ServerURL string // the MCP server's URL: the protected resource

	Grant        string // client_credentials or refresh_token
	ClientID     string
	ClientSecret string
	// PrivateKey is the PEM of the private_key_jwt signing key (RSA, EC or
	// Ed25519), read from PrivateKeyFile; KeyID, when set, is the
	// assertion's kid header.
	PrivateKey     []byte
	PrivateKeyFile string
	KeyID          string
	// AuthMethod forces a client authentication method; empty chooses from
	// what is configured and what the authorization server supports.
	AuthMethod string
	// RefreshToken is the refresh token as read from RefreshTokenFile now;
	// a rotated one is written back there.
	RefreshToken     string
	RefreshTokenFile string
	// Scopes, when set, are asked for instead of the discovered ones.
	Scopes []string
	// TokenURL, when set, skips discovery.
	TokenURL string

	// Login is set for mcpwatch login alone (grant authorization_code):
	// how the person signing in is reached.
	Login *Login
}

// Validate reports a configuration that cannot work, naming the key.
func (c Config) Validate() error {
	if c.Grant == GrantAuthorizationCode {
		return c.validateLogin()
	}
	switch {
	case !slices.Contains(Grants, c.Grant):
		return fmt.Errorf("grant %q: use %s", c.Grant, strings.Join(Grants, " or "))
	case c.AuthMethod != "" && !slices.Contains(AuthMethods, c.AuthMethod):
		return fmt.Errorf("auth_method %q: use one of %s", c.AuthMethod, strings.Join(AuthMethods, ", "))
	case c.Grant == GrantClientCredentials && c.ClientSecret == "" && c.PrivateKeyFile == "":
		return fmt.Errorf("grant client_credentials needs client_secret or private_key_file")
	case c.ClientSecret != "" && c.PrivateKeyFile != "":
		return fmt.Errorf("client_secret and private_key_file are both set; keep one")
	case c.Grant == GrantClientCredentials && c.AuthMethod == AuthNone:
		return fmt.Errorf("auth_method none cannot be used with grant client_credentials")
	case c.Grant == GrantRefreshToken && c.RefreshTokenFile == "":
		return fmt.Errorf("grant refresh_token needs refresh_token: ${file:PATH}, the file a rotated refresh token is written back to")
	case c.Grant == GrantClientCredentials && c.RefreshTokenFile != "":
		return fmt.Errorf("refresh_token applies to grant refresh_token only; remove it or set grant: refresh_token")
	}
	return nil
}

// validateLogin is Validate for mcpwatch login's configuration.
func (c Config) validateLogin() error {
	switch {
	case c.Login == nil || c.Login.Browser == nil:
		return fmt.Errorf("grant authorization_code is mcpwatch login's, and needs a way to reach the person signing in")
	case c.RefreshTokenFile == "":
		return fmt.Errorf("mcpwatch login needs refresh_token: ${file:PATH}, the file the refresh token is stored in")
	case c.ClientSecret != "" && c.PrivateKeyFile != "":
		return fmt.Errorf("client_secret and private_key_file are both set; keep one")
	case c.ClientID == "" && (c.ClientSecret != "" || c.PrivateKeyFile != ""):
		return fmt.Errorf("a client secret or key is set without client_id")
	}
	return nil
}

// key is what identifies a client across probes: a change in any of it
// (a reload with another client, secret or key) starts afresh.
func (c Config) key() string {
	return strings.Join([]string{c.ServerURL, c.Grant, c.ClientID, c.ClientSecret, string(c.PrivateKey), c.KeyID,
		c.AuthMethod, c.RefreshTokenFile, strings.Join(c.Scopes, " "), c.TokenURL}, "\x00")
}

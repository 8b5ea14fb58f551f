// Package oauthspec holds the OAuth values mcpwatch speaks, as the RFCs
// register them: the grant types and the token endpoint's client
// authentication methods. The configuration checks an auth: block against
// them at load (internal/config) and the OAuth client acts on them
// (internal/oauth); neither needs the other for it.
package oauthspec

// Grants (RFC 6749 grant_type values).
const (
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"
	// GrantAuthorizationCode is mcpwatch login's: a person signs in in a
	// browser, once, and the refresh token it yields is stored for the
	// refresh_token grant. It is never configured (Grants does not list it).
	GrantAuthorizationCode = "authorization_code"
)

// Client authentication methods at the token endpoint (RFC 7591
// token_endpoint_auth_method values).
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
	AuthNone              = "none" // a public client: refresh tokens only
)

// Grants and AuthMethods list the values an auth: block may give.
var (
	Grants      = []string{GrantClientCredentials, GrantRefreshToken}
	AuthMethods = []string{AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT, AuthNone}
)

// Package oauth is the OAuth 2.1 client mcpwatch uses to reach remote MCP
// servers that want a bearer token, after the MCP authorization
// specification (2025-06-18 and 2025-11-25, with the 2025-03-26 fallbacks):
//
//   - discovery: the 401's WWW-Authenticate challenge names the protected
//     resource metadata (RFC 9728), else it is looked up at its well-known
//     URLs; that names the authorization server, whose metadata is read at
//     the RFC 8414 and OpenID Connect well-known URLs (path-inserted forms
//     first). A server without resource metadata is its own authorization
//     server, as in 2025-03-26, with /token as the default endpoint when it
//     publishes no metadata either;
//   - grants: client credentials (client_secret_basic, client_secret_post,
//     private_key_jwt) and refresh token, with the resource parameter of
//     RFC 8707; a rotated refresh token is written back to its file
//     atomically, mode 0600, before the new access token is used;
//   - scopes: the configured ones, else the challenge's, else the resource
//     metadata's scopes_supported, else none; one step-up on
//     insufficient_scope, never a second for the same scope;
//   - tokens are cached per server (a Client lives as long as its server's
//     configuration) until shortly before they expire.
//
// Token requests go through golang.org/x/oauth2 (the clientcredentials
// package, whose grant_type may be overridden, serves the refresh grant too:
// oauth2.Config's refresh cannot carry the resource parameter or a client
// assertion); client assertions are signed with golang-jwt. There is no
// browser flow: a server that offers only the authorization code grant is a
// configuration problem, and the error says how to get a refresh token.
//
// A Client plugs into a probe as a probe.Authorizer: every request of the
// probe goes through its RoundTripper, within the probe's one deadline.
// Failures are *probe.Failure values that name the step that failed
// (discovery, the token endpoint and its error code, the call itself, the
// scope a step-up asked for), never a token.
package oauth

package config

import (
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/oauthspec"
)

// Auth is a server's auth: block, kept unexpanded like every other value:
//
//	auth:
//	  type: oauth
//	  grant: client_credentials        # or refresh_token
//	  client_id: mcpwatch
//	  client_secret: ${file:/run/secrets/mcp-client-secret}   # or private_key_file
//	  private_key_file: ./keys/mcpwatch.pem                   # private_key_jwt
//	  key_id: k1                       # the assertion's kid (optional)
//	  auth_method: client_secret_post  # optional: forces one
//	  refresh_token: ${file:/var/lib/mcpwatch/remote.refresh} # refresh_token grant; rotated ones are written back
//	  scopes: [mcp:read]               # optional: else the challenge's, else scopes_supported
//	  token_url: https://auth.example.com/oauth/token         # optional: skips discovery
type Auth struct {
	Type           string
	Grant          string
	ClientID       string
	ClientSecret   string
	PrivateKeyFile string
	KeyID          string
	AuthMethod     string
	RefreshToken   string
	Scopes         []string
	TokenURL       string
}

// decodeAuth reads a server's auth: block.
func decodeAuth(o *object) *Auth {
	a := &Auth{}
	a.Type, _ = o.string("type")
	a.Grant, _ = o.string("grant")
	a.ClientID, _ = o.string("client_id")
	a.ClientSecret, _ = o.string("client_secret")
	a.PrivateKeyFile, _ = o.string("private_key_file")
	a.KeyID, _ = o.string("key_id")
	a.AuthMethod, _ = o.string("auth_method")
	a.RefreshToken, _ = o.string("refresh_token")
	a.Scopes, _ = o.strings("scopes")
	a.TokenURL, _ = o.string("token_url")
	o.finish()
	return a
}

// checkAuth reports what is wrong with an auth: block, naming the key.
func checkAuth(d *decoder, s *Server, prefix string) {
	a := s.Auth
	at := func(k string) string { return joinKey(joinKey(prefix, "auth"), k) }
	if s.URL == "" {
		d.errorf(joinKey(prefix, "auth"), "applies only to url servers; a command server gets its credentials through env")
		return
	}
	if a.Type != "oauth" {
		d.errorf(at("type"), "%q is not an auth type; use oauth (a static token goes in headers: Authorization)", a.Type)
		return
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			d.errorf(joinKey(joinKey(prefix, "headers"), k), "is set together with auth:; the OAuth client sends the Authorization header, so remove one")
		}
	}
	if !slices.Contains(oauthspec.Grants, a.Grant) {
		d.errorf(at("grant"), "%q is not a grant; use client_credentials (a machine client) or refresh_token (delegated access, the token from a file)", a.Grant)
	}
	switch {
	case a.ClientID == "" && a.Grant == oauthspec.GrantRefreshToken && (a.ClientSecret != "" || a.PrivateKeyFile != ""):
		d.errorf(at("client_id"), "is required with a client secret or key; give the client_id the authorization server knows mcpwatch by")
	case a.ClientID == "" && a.Grant != oauthspec.GrantRefreshToken:
		// With grant refresh_token it may be left out: mcpwatch login then
		// uses a Client ID Metadata Document or registers a client, and
		// keeps it beside the refresh token.
		d.errorf(at("client_id"), "is required; give the client_id the authorization server knows mcpwatch by")
	}
	if a.AuthMethod != "" && !slices.Contains(oauthspec.AuthMethods, a.AuthMethod) {
		d.errorf(at("auth_method"), "%q is not a client authentication method; use one of %s", a.AuthMethod, strings.Join(oauthspec.AuthMethods, ", "))
	}
	switch {
	case a.ClientSecret != "" && a.PrivateKeyFile != "":
		d.errorf(at("client_secret"), "is set together with private_key_file; keep one (private_key_file signs private_key_jwt assertions)")
	case a.Grant == oauthspec.GrantClientCredentials && a.ClientSecret == "" && a.PrivateKeyFile == "":
		d.errorf(joinKey(prefix, "auth"), "grant client_credentials needs client_secret or private_key_file")
	}
	switch {
	case a.Grant == oauthspec.GrantRefreshToken && a.RefreshToken == "":
		d.errorf(at("refresh_token"), "is required for grant refresh_token: write refresh_token: \"${file:PATH}\", and run 'mcpwatch login %s' to sign in in a browser and store the refresh token there", s.Name)
	case a.Grant == oauthspec.GrantRefreshToken:
		if !expand.IsFileReference(a.RefreshToken) {
			d.errorf(at("refresh_token"), "must be a file reference, \"${file:PATH}\" and nothing else: a rotated refresh token is written back to that file")
		}
	case a.RefreshToken != "":
		d.errorf(at("refresh_token"), "applies to grant refresh_token only; remove it or set grant: refresh_token")
	}
	d.checkRef(at("client_id"), a.ClientID)
	d.checkRef(at("client_secret"), a.ClientSecret)
	d.checkRef(at("private_key_file"), a.PrivateKeyFile)
	d.checkRef(at("refresh_token"), a.RefreshToken)
	d.checkRef(at("token_url"), a.TokenURL)
	if a.TokenURL != "" && !strings.Contains(a.TokenURL, "${") {
		if problem := checkURL(a.TokenURL); problem != "" {
			d.errorf(at("token_url"), "%s", problem)
		}
	}
}

// RedactedAuth is an auth: block fit to print: secrets redacted, file
// references shown as written.
type RedactedAuth struct {
	Type           string   `json:"type"`
	Grant          string   `json:"grant"`
	ClientID       string   `json:"client_id"`
	ClientSecret   string   `json:"client_secret,omitempty"`
	PrivateKeyFile string   `json:"private_key_file,omitempty"`
	KeyID          string   `json:"key_id,omitempty"`
	AuthMethod     string   `json:"auth_method,omitempty"`
	RefreshToken   string   `json:"refresh_token,omitempty"`
	Scopes         []string `json:"scopes,omitempty"`
	TokenURL       string   `json:"token_url,omitempty"`
}

func (a *Auth) redacted() *RedactedAuth {
	if a == nil {
		return nil
	}
	return &RedactedAuth{
		Type: a.Type, Grant: a.Grant, ClientID: a.ClientID,
		ClientSecret:   expand.RedactValue(a.ClientSecret),
		PrivateKeyFile: a.PrivateKeyFile, KeyID: a.KeyID, AuthMethod: a.AuthMethod,
		RefreshToken: expand.RedactValue(a.RefreshToken),
		Scopes:       slices.Clone(a.Scopes),
		TokenURL:     expand.RedactURL(a.TokenURL),
	}
}

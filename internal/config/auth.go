package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
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
	if !slices.Contains(oauth.Grants, a.Grant) {
		d.errorf(at("grant"), "%q is not a grant; use client_credentials (a machine client) or refresh_token (delegated access, the token from a file)", a.Grant)
	}
	switch {
	case a.ClientID == "" && a.Grant == oauth.GrantRefreshToken && (a.ClientSecret != "" || a.PrivateKeyFile != ""):
		d.errorf(at("client_id"), "is required with a client secret or key; give the client_id the authorization server knows mcpwatch by")
	case a.ClientID == "" && a.Grant != oauth.GrantRefreshToken:
		// With grant refresh_token it may be left out: mcpwatch login then
		// uses a Client ID Metadata Document or registers a client, and
		// keeps it beside the refresh token.
		d.errorf(at("client_id"), "is required; give the client_id the authorization server knows mcpwatch by")
	}
	if a.AuthMethod != "" && !slices.Contains(oauth.AuthMethods, a.AuthMethod) {
		d.errorf(at("auth_method"), "%q is not a client authentication method; use one of %s", a.AuthMethod, strings.Join(oauth.AuthMethods, ", "))
	}
	switch {
	case a.ClientSecret != "" && a.PrivateKeyFile != "":
		d.errorf(at("client_secret"), "is set together with private_key_file; keep one (private_key_file signs private_key_jwt assertions)")
	case a.Grant == oauth.GrantClientCredentials && a.ClientSecret == "" && a.PrivateKeyFile == "":
		d.errorf(joinKey(prefix, "auth"), "grant client_credentials needs client_secret or private_key_file")
	}
	switch {
	case a.Grant == oauth.GrantRefreshToken && a.RefreshToken == "":
		d.errorf(at("refresh_token"), "is required for grant refresh_token: write refresh_token: \"${file:PATH}\", and run 'mcpwatch login %s' to sign in in a browser and store the refresh token there", s.Name)
	case a.Grant == oauth.GrantRefreshToken:
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

// OAuth expands the server's auth: block for one probe: nil when it has
// none. The refresh token and the private key are read now, as every
// ${file:...} is at each probe. Errors are *expand.Error values naming the
// server and the key, never a value.
func (s Server) OAuth(lookup func(string) (string, bool)) (*oauth.Config, error) {
	return s.oauth(lookup, true)
}

// LoginOAuth is OAuth for mcpwatch login: the refresh token's file is
// resolved but not read (it is the file login writes, and need not exist
// yet). It is an error for a server whose auth: block is not grant
// refresh_token, which has nothing to sign in to.
func (s Server) LoginOAuth(lookup func(string) (string, bool)) (*oauth.Config, error) {
	switch {
	case s.Auth == nil:
		return nil, fmt.Errorf("server %q has no auth: block; give it one with grant: refresh_token and refresh_token: \"${file:PATH}\" (see docs/oauth.md)", s.Name)
	case s.Auth.Grant != oauth.GrantRefreshToken:
		return nil, fmt.Errorf("server %q uses grant %s, which needs no sign-in; mcpwatch login is for grant refresh_token", s.Name, s.Auth.Grant)
	}
	return s.oauth(lookup, false)
}

func (s Server) oauth(lookup func(string) (string, bool), readRefreshToken bool) (*oauth.Config, error) {
	a := s.Auth
	if a == nil {
		return nil, nil
	}
	x := expand.Expander{Lookup: lookup, BaseDir: s.baseDir, Inputs: s.inputs, Workspace: s.workspace}
	var first error
	expandAt := func(key, value string) string {
		if first != nil || value == "" {
			return ""
		}
		v, err := x.Expand(value)
		if err != nil {
			if ee := (*expand.Error)(nil); errors.As(err, &ee) {
				ee.Server, ee.Key, ee.Source = s.Name, "auth."+key, s.Source
			}
			first = err
		}
		return v
	}
	cfg := &oauth.Config{
		Server:       s.Name,
		Grant:        a.Grant,
		ClientID:     expandAt("client_id", a.ClientID),
		ClientSecret: expandAt("client_secret", a.ClientSecret),
		KeyID:        a.KeyID,
		AuthMethod:   a.AuthMethod,
		Scopes:       a.Scopes,
		TokenURL:     expandAt("token_url", a.TokenURL),
	}
	if a.PrivateKeyFile != "" {
		cfg.PrivateKeyFile = resolvePath(expandAt("private_key_file", a.PrivateKeyFile), s.baseDir, lookup)
		if first == nil {
			pem, err := readfile.Read(cfg.PrivateKeyFile, expand.MaxSecretBytes)
			if err != nil {
				return nil, &expand.Error{Server: s.Name, Source: s.Source, Key: "auth.private_key_file", Kind: expand.ErrSecretFile, File: cfg.PrivateKeyFile, Cause: err,
					Problem: fmt.Sprintf("cannot read private key file %s: %s; create it or fix the path", cfg.PrivateKeyFile, expand.FileProblem(err))}
			}
			cfg.PrivateKey = pem
		}
	}
	if path, ok, err := x.FilePath(a.RefreshToken); ok && first == nil {
		if err != nil {
			first = err
		} else {
			cfg.RefreshTokenFile = resolvePath(path, s.baseDir, lookup)
			if readRefreshToken {
				cfg.RefreshToken = expandAt("refresh_token", a.RefreshToken)
			}
		}
	}
	if ee := (*expand.Error)(nil); errors.As(first, &ee) && ee.Key == "auth.refresh_token" && errors.Is(first, fs.ErrNotExist) {
		ee.Problem = fmt.Sprintf("there is no refresh token at %s yet: run 'mcpwatch login %s' to sign in in a browser and store one there", cfg.RefreshTokenFile, s.Name)
	}
	if first != nil {
		return nil, first
	}
	return cfg, nil
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

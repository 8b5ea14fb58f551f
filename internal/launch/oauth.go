package launch

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// OAuth expands the auth: block of s for one probe: nil when it has
// none. The refresh token and the private key are read now, as every
// ${file:...} is at each probe. Errors are *expand.Error values naming the
// server and the key, never a value.
func OAuth(s config.Server, lookup func(string) (string, bool)) (*oauth.Config, error) {
	return oauthConfig(s, lookup, true)
}

// LoginOAuth is OAuth for mcpwatch login: the refresh token's file is
// resolved but not read (it is the file login writes, and need not exist
// yet). It is an error for a server whose auth: block is not grant
// refresh_token, which has nothing to sign in to.
func LoginOAuth(s config.Server, lookup func(string) (string, bool)) (*oauth.Config, error) {
	switch {
	case s.Auth == nil:
		return nil, fmt.Errorf("server %q has no auth: block; give it one with grant: refresh_token and refresh_token: \"${file:PATH}\" (see docs/oauth.md)", s.Name)
	case s.Auth.Grant != oauth.GrantRefreshToken:
		return nil, fmt.Errorf("server %q uses grant %s, which needs no sign-in; mcpwatch login is for grant refresh_token", s.Name, s.Auth.Grant)
	}
	return oauthConfig(s, lookup, false)
}

func oauthConfig(s config.Server, lookup func(string) (string, bool), readRefreshToken bool) (*oauth.Config, error) {
	a := s.Auth
	if a == nil {
		return nil, nil
	}
	x := expand.Expander{Lookup: lookup, BaseDir: s.BaseDir, Inputs: s.Inputs, Workspace: s.Workspace}
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
		cfg.PrivateKeyFile, _ = x.Path(expandAt("private_key_file", a.PrivateKeyFile))
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
			cfg.RefreshTokenFile, _ = x.Path(path)
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

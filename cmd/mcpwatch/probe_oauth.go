package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
)

// oauthFlags are mcpwatch probe's --oauth-* flags: an auth: block for a
// one-off probe.
type oauthFlags struct {
	grant, clientID, clientSecret, privateKeyFile, keyID, authMethod, refreshToken, tokenURL string
	scopes                                                                                   []string
}

var oauthFlagNames = []string{"oauth-grant", "oauth-client-id", "oauth-client-secret", "oauth-private-key-file",
	"oauth-key-id", "oauth-auth-method", "oauth-refresh-token", "oauth-scopes", "oauth-token-url"}

func (o *oauthFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.grant, "oauth-grant", "", "OAuth grant: client_credentials, or refresh_token (default: refresh_token when --oauth-refresh-token is given)")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "OAuth client_id (any --oauth-* flag turns the OAuth client on)")
	fs.StringVar(&o.clientSecret, "oauth-client-secret", "", "OAuth client secret, as a reference: '${file:PATH}' or '${VAR}'")
	fs.StringVar(&o.privateKeyFile, "oauth-private-key-file", "", "PEM private key `file` for private_key_jwt client assertions")
	fs.StringVar(&o.keyID, "oauth-key-id", "", "kid of the private_key_jwt assertion")
	fs.StringVar(&o.authMethod, "oauth-auth-method", "", "client authentication: client_secret_basic, client_secret_post, private_key_jwt or none (default: from the key or secret and the server's metadata)")
	fs.StringVar(&o.refreshToken, "oauth-refresh-token", "", "'${file:PATH}' holding the refresh token; a rotated one is written back there")
	fs.StringSliceVar(&o.scopes, "oauth-scopes", nil, "scopes to ask for, comma-separated (default: the server's challenge, else scopes_supported)")
	fs.StringVar(&o.tokenURL, "oauth-token-url", "", "token endpoint `URL`, skipping discovery")
}

func (o *oauthFlags) set(fs *pflag.FlagSet) bool {
	for _, n := range oauthFlagNames {
		if fs.Changed(n) {
			return true
		}
	}
	return false
}

// check rejects --oauth-* flags that cannot make a client, before any
// value is read: the client the probe makes (launch.Build) is
// checked again with the values.
func (o *oauthFlags) check() error {
	if o.refreshToken != "" && !expand.IsFileReference(o.refreshToken) {
		return usagef("--oauth-refresh-token: give '${file:PATH}', the file a rotated refresh token is written back to")
	}
	a := o.auth()
	oc := oauth.Config{Grant: a.Grant, ClientID: a.ClientID, ClientSecret: a.ClientSecret, PrivateKeyFile: a.PrivateKeyFile,
		AuthMethod: a.AuthMethod, RefreshTokenFile: a.RefreshToken}
	if err := oc.Validate(); err != nil {
		return usagef("--oauth-*: %v", err)
	}
	return nil
}

// auth is the auth: block the flags describe, read as one in
// mcpwatch.yml is.
func (o *oauthFlags) auth() *config.Auth {
	grant := o.grant
	if grant == "" {
		grant = oauth.GrantClientCredentials
		if o.refreshToken != "" {
			grant = oauth.GrantRefreshToken
		}
	}
	return &config.Auth{
		Type: "oauth", Grant: grant, ClientID: o.clientID, ClientSecret: o.clientSecret,
		PrivateKeyFile: o.privateKeyFile, KeyID: o.keyID, AuthMethod: o.authMethod,
		RefreshToken: o.refreshToken, Scopes: o.scopes, TokenURL: o.tokenURL,
	}
}

// printCredentials adds what is known of the credentials' expiry to the
// text output.
func printCredentials(w io.Writer, st *probe.CredentialStatus, now time.Time) {
	if st == nil {
		return
	}
	for _, e := range st.Expiries {
		left := "expired"
		if d := e.Expiry.Sub(now); d > 0 {
			left = "in " + d.Round(time.Second).String()
		}
		note := ""
		if e.Renewed {
			note = " (renewed by mcpwatch)"
		}
		fmt.Fprintf(w, "  expires    %s %s, %s%s\n", e.Credential, left, e.Expiry.UTC().Format(time.RFC3339), note)
	}
	if n := sumFailures(st.RefreshFailures); n > 0 {
		var parts []string
		for _, r := range oauth.FailureReasons {
			if c := st.RefreshFailures[r]; c > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", r, c))
			}
		}
		fmt.Fprintf(w, "  oauth      token requests failed: %s\n", strings.Join(parts, ", "))
	}
}

func sumFailures(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

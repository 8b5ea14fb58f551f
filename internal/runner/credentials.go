package runner

import (
	"sort"
	"strconv"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
)

// authorize gives a target with an auth: block its OAuth client: the
// cache's (tokens kept across probes), or a new one for this probe alone;
// with login, a new one that signs in.
func authorize(s config.Server, target *probe.Target, lookup func(string) (string, bool), cache *oauth.Cache, login *oauth.Login) (*oauth.Client, error) {
	read := s.OAuth
	if login != nil {
		read = s.LoginOAuth
	}
	oc, err := read(lookup)
	if err != nil || oc == nil {
		return nil, err
	}
	oc.ServerURL = target.URL
	if login != nil {
		oc.Grant, oc.Login = oauth.GrantAuthorizationCode, login
	}
	var client *oauth.Client
	if cache != nil && login == nil {
		client, err = cache.Client(*oc)
	} else {
		client, err = oauth.New(*oc)
	}
	if err != nil {
		return nil, err
	}
	target.Auth = client
	return client, nil
}

// credentialStatus is what is known of the target's credentials after a
// probe: the OAuth client's tokens, and the expiry of every header or env
// value that is a JWT (its exp, read without verifying).
func credentialStatus(target probe.Target, client *oauth.Client) *probe.CredentialStatus {
	st := &probe.CredentialStatus{}
	if client != nil {
		st = client.Status()
	}
	add := func(kind string, values map[string]string) {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if exp, ok := oauth.JWTExpiry(values[k]); ok {
				st.Expiries = append(st.Expiries, probe.CredentialExpiry{Credential: kind + ":" + k, Expiry: exp})
			}
		}
	}
	add("header", target.Headers)
	add("env", target.Env)
	if !st.OAuth && len(st.Expiries) == 0 {
		return nil
	}
	return st
}

// WithSecrets returns the target with extra values to scrub (the OAuth
// tokens and client secret) added as env entries: the scrubber reads env
// values, and this copy is only ever given to it.
func WithSecrets(t probe.Target, secrets []string) probe.Target {
	if len(secrets) == 0 {
		return t
	}
	env := make(map[string]string, len(t.Env)+len(secrets))
	for k, v := range t.Env {
		env[k] = v
	}
	for i, s := range secrets {
		env["\x00oauth"+strconv.Itoa(i)] = s
	}
	t.Env = env
	return t
}

package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// maxMetadataBytes bounds a metadata document: the server chooses it.
const maxMetadataBytes = 1 << 20

// endpoints is what discovery found out about a server's authorization.
type endpoints struct {
	// issuer is the authorization server's issuer identifier: its
	// metadata's issuer, or the server's origin in the 2025-03-26 layout
	// without metadata; "" when token_url skipped discovery. It is the
	// audience of a private_key_jwt client assertion.
	issuer   string
	tokenURL string
	// serverLocal is whether the MCP server is plain http or on a local
	// address, which decides where its authorization may be (reachFor).
	serverLocal     bool
	resource        string   // the RFC 8707 resource indicator
	scopesSupported []string // the resource's, else the authorization server's
	authMethods     []string // token_endpoint_auth_methods_supported; nil when unknown
	grants          []string // grant_types_supported; nil when unknown

	// What mcpwatch login needs besides: the authorization endpoint, how
	// a client without a client_id gets one (a Client ID Metadata
	// Document, or RFC 7591 registration), PKCE's methods (nil: the
	// metadata does not say, so no PKCE), and whether the server's scopes
	// include offline_access. Without metadata (2025-03-26) the default
	// /authorize and /register, and PKCE assumed, as that revision
	// required it.
	authorizationURL string
	registrationURL  string
	cimd             bool
	pkceMethods      []string
	offlineAccess    bool
	issParameter     bool // the authorization response always carries iss (RFC 9207)
	// found says how, for messages ("resource metadata at ..., metadata at ...").
	found string
}

// resourceMetadata is RFC 9728's protected resource metadata, the fields used.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is RFC 8414's authorization server metadata (and OpenID
// Connect's, which shares these fields), the fields used.
type serverMetadata struct {
	Issuer               string   `json:"issuer"`
	TokenEndpoint        string   `json:"token_endpoint"`
	GrantTypes           []string `json:"grant_types_supported"`
	TokenAuthMethods     []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported      []string `json:"scopes_supported"`
	AuthorizationEndp    string   `json:"authorization_endpoint"`
	RegistrationEndpoint string   `json:"registration_endpoint"`
	CodeChallenge        []string `json:"code_challenge_methods_supported"`
	// ClientIDMetadataDocument is the MCP authorization spec's (2025-11-25)
	// flag for OAuth Client ID Metadata Documents.
	ClientIDMetadataDocument bool `json:"client_id_metadata_document_supported"`
	// IssParameter is RFC 9207's promise to send iss with every
	// authorization response.
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
}

// errNotFound is a metadata URL that answered 404: the next one is tried.
var errNotFound = errors.New("not found")

// discover finds the token endpoint of the server behind serverURL, from
// the 401's challenge (nil when it had none).
//
// A configured tokenURL skips discovery, unless needIssuer: a
// private_key_jwt assertion is addressed to the authorization server's
// issuer, which only its metadata names; the configured token URL is then
// used in place of the discovered one.
//
// local says whether the MCP server is plain http or on a local address:
// only then may the URLs discovery follows be plain http (reachFor decides
// the addresses, as each is dialed).
func discover(ctx context.Context, hc *http.Client, serverURL *url.URL, local bool, tokenURL string, needIssuer bool, ch *probe.Challenge) (*endpoints, error) {
	resource := canonicalResource(serverURL)
	if tokenURL != "" && !needIssuer {
		return &endpoints{tokenURL: tokenURL, serverLocal: local, resource: resource, found: "token_url from the configuration"}, nil
	}
	d := discovery{hc: hc, local: local}
	ep, err := d.metadata(ctx, serverURL, resource, ch)
	if err != nil {
		if tokenURL != "" {
			return nil, fmt.Errorf("private_key_jwt addresses its assertion to the authorization server's issuer, which discovery could not find although token_url is set: %w", err)
		}
		return nil, err
	}
	ep.serverLocal = local
	if tokenURL != "" {
		ep.tokenURL = tokenURL
		ep.found += "; token_url from the configuration"
	}
	return ep, nil
}

// discovery is one discovery's requests: hc, and whether the server is
// local (plain http allowed).
type discovery struct {
	hc    *http.Client
	local bool
}

// plainHTTPRule is what a refusal of a plain http URL says.
const plainHTTPRule = "plain http is allowed only when the MCP server itself is plain http or on a loopback, private or link-local address"

// acceptable allows https, and plain http when the server is local.
func (d discovery) acceptable(u *url.URL) bool {
	return u.Scheme == "https" || (u.Scheme == "http" && d.local)
}

func (d discovery) metadata(ctx context.Context, serverURL *url.URL, resource string, ch *probe.Challenge) (*endpoints, error) {
	origin := originURL(serverURL)

	// RFC 9728: the challenge's resource_metadata, else the well-known
	// URL with the server's path inserted, else at the root.
	var candidates []string
	if ch != nil && ch.ResourceMetadata != "" {
		candidates = append(candidates, ch.ResourceMetadata)
	} else {
		if p := strings.TrimSuffix(serverURL.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
		}
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	}
	var prm resourceMetadata
	prmURL, err := d.firstFound(ctx, candidates, &prm)
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	if errors.Is(err, errNotFound) {
		if ch != nil && ch.ResourceMetadata != "" {
			return nil, fmt.Errorf("the protected resource metadata the challenge names, %s, is not there (HTTP 404)", show(ch.ResourceMetadata))
		}
		// 2025-03-26: no resource metadata; the server's origin is the
		// authorization server, with default endpoints when it publishes
		// no metadata either.
		ep, err := d.serverEndpoints(ctx, origin, true)
		if err != nil {
			return nil, err
		}
		ep.resource = resource
		ep.found = "no protected resource metadata (" + strings.Join(showAll(candidates), ", ") + ": 404), so the server's origin as its own authorization server (2025-03-26); " + ep.found
		return ep, nil
	}

	if prm.Resource != "" {
		if !coversResource(prm.Resource, resource) {
			return nil, fmt.Errorf("the protected resource metadata at %s is for resource %s, not for this server (%s); refusing to get a token for another resource", show(prmURL), show(prm.Resource), show(resource))
		}
		resource = prm.Resource
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("the protected resource metadata at %s names no authorization_servers", show(prmURL))
	}
	issuer := prm.AuthorizationServers[0]
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" || !d.acceptable(iu) {
		return nil, fmt.Errorf("the protected resource metadata at %s names authorization server %s: not an https URL (%s)", show(prmURL), show(issuer), plainHTTPRule)
	}
	ep, err := d.serverEndpoints(ctx, issuer, false)
	if err != nil {
		return nil, err
	}
	ep.resource = resource
	if len(prm.ScopesSupported) > 0 {
		ep.scopesSupported = prm.ScopesSupported
	}
	ep.found = "protected resource metadata at " + show(prmURL) + ", " + ep.found
	return ep, nil
}

// serverEndpoints reads the metadata of the authorization server issuer:
// RFC 8414 and OpenID Connect well-known URLs, path-inserted forms first.
// defaults allows the 2025-03-26 default endpoints when none is found.
func (d discovery) serverEndpoints(ctx context.Context, issuer string, defaults bool) (*endpoints, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("authorization server %s is not a URL", show(issuer))
	}
	origin := originURL(iu)
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	var candidates []string
	if p != "" {
		candidates = []string{
			origin + "/.well-known/oauth-authorization-server" + p,
			origin + "/.well-known/openid-configuration" + p,
			origin + p + "/.well-known/openid-configuration",
		}
	} else {
		candidates = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	var md serverMetadata
	mdURL, err := d.firstFound(ctx, candidates, &md)
	switch {
	case errors.Is(err, errNotFound) && defaults:
		return &endpoints{issuer: origin, tokenURL: origin + "/token",
			authorizationURL: origin + "/authorize", registrationURL: origin + "/register", pkceMethods: []string{"S256"},
			found: "no authorization server metadata (" + strings.Join(showAll(candidates), ", ") + ": 404), so the default endpoint " + show(origin+"/token")}, nil
	case errors.Is(err, errNotFound):
		return nil, fmt.Errorf("authorization server %s publishes no metadata (%s: 404)", show(issuer), strings.Join(showAll(candidates), ", "))
	case err != nil:
		return nil, err
	}
	note := ""
	if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		if !defaults || !sameOrigin(md.Issuer, iu) {
			return nil, fmt.Errorf("the metadata at %s is for issuer %s, not %s (RFC 8414 section 3.3)", show(mdURL), show(md.Issuer), show(issuer))
		}
		// A 2025-03-26 server without protected resource metadata: its
		// origin is its authorization server by that revision's rule,
		// and the document came from that origin. An issuer on the same
		// origin under another path names no other party, so there is
		// nothing to mix up, and the issuer is taken as the document
		// says (the iss mcpwatch login expects, the audience of a
		// private_key_jwt assertion). One on another origin is still
		// refused: a server could otherwise claim another authorization
		// server's identity.
		note = " (issuer " + show(md.Issuer) + ", on the server's own origin: accepted for a 2025-03-26 server)"
	}
	tu, err := url.Parse(md.TokenEndpoint)
	if md.TokenEndpoint == "" || err != nil || tu.Host == "" || !d.acceptable(tu) {
		return nil, fmt.Errorf("the metadata at %s has no https token_endpoint (%s)", show(mdURL), plainHTTPRule)
	}
	return &endpoints{issuer: md.Issuer, tokenURL: md.TokenEndpoint, scopesSupported: md.ScopesSupported,
		authMethods: md.TokenAuthMethods, grants: md.GrantTypes,
		authorizationURL: md.AuthorizationEndp, registrationURL: md.RegistrationEndpoint,
		cimd: md.ClientIDMetadataDocument, pkceMethods: md.CodeChallenge,
		offlineAccess: slices.Contains(md.ScopesSupported, "offline_access"), issParameter: md.IssParameter,
		found: "authorization server metadata at " + show(mdURL) + note}, nil
}

// firstFound GETs each URL in turn and decodes the first one that answers
// 200 into v. All 404 is errNotFound; any other answer or error stops.
func (d discovery) firstFound(ctx context.Context, urls []string, v any) (string, error) {
	for _, u := range urls {
		err := d.getJSON(ctx, u, v)
		if errors.Is(err, errNotFound) {
			continue
		}
		return u, err
	}
	return "", errNotFound
}

// getJSON reads one metadata document: the protected resource metadata
// URL a challenge names is held to the same https rule as every other.
func (d discovery) getJSON(ctx context.Context, raw string, v any) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%s is not an http(s) URL", show(raw))
	}
	if !d.acceptable(u) {
		return fmt.Errorf("%s is not an https URL (%s)", show(raw), plainHTTPRule)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", show(raw), err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.hc.Do(req)
	if err != nil {
		return &transportError{what: "GET " + show(raw), err: err}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return errNotFound
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: HTTP %d", show(raw), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return &transportError{what: "GET " + show(raw), err: err}
	}
	if len(body) > maxMetadataBytes {
		return fmt.Errorf("GET %s: the document is over %d bytes", show(raw), maxMetadataBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not a JSON metadata document", show(raw))
	}
	return nil
}

// transportError is a request that got no answer: a connection problem,
// or the deadline.
type transportError struct {
	what string
	err  error
}

func (e *transportError) Error() string {
	err := e.err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // it repeats the URL, query included
	}
	return e.what + ": " + err.Error()
}

func (e *transportError) Unwrap() error { return e.err }

// canonicalResource is the server's URL as an RFC 8707 resource
// indicator: lower-case scheme and host, no query or fragment, no trailing
// slash on the path.
func canonicalResource(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: strings.TrimSuffix(u.Path, "/"), RawPath: strings.TrimSuffix(u.RawPath, "/")}
	return c.String()
}

// coversResource reports whether the metadata's resource is this server's
// URL or a parent of it at a path boundary.
func coversResource(declared, ours string) bool {
	d := strings.TrimSuffix(declared, "/")
	if u, err := url.Parse(d); err == nil {
		d = canonicalResource(u)
	}
	return d == ours || strings.HasPrefix(ours, d+"/")
}

// sameOrigin reports whether raw is an absolute URL on u's origin: the
// same scheme, host and port.
func sameOrigin(raw string, u *url.URL) bool {
	v, err := url.Parse(raw)
	return err == nil && v.Host != "" && originOf(v) == originOf(u)
}

func originURL(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + u.Host
}

// originOf is scheme://host:port with the default port made explicit.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// show prints a URL a server chose as every error does (secret.RedactURL),
// cut to a bounded length.
func show(raw string) string {
	if _, err := url.Parse(raw); err != nil {
		return "(not a URL)"
	}
	return sanitize.Truncate(secret.RedactURL(raw, nil), 200)
}

func showAll(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = show(u)
	}
	return out
}

package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/probe"
)

// identity is who the client is at the token endpoint: the configured
// client, or the one mcpwatch login registered (a Client ID Metadata
// Document's URL, or a client of RFC 7591 registration) and kept beside
// the refresh token.
type identity struct {
	id, secret, method string
	reg                *registration // nil for the configured client
}

// How a client that mcpwatch login set up came to be.
const (
	RegisteredByMetadataDocument = "client_id_metadata_document"
	RegisteredDynamically        = "dynamic_client_registration"
	ConfiguredClient             = "configured"
)

// registration is the client mcpwatch login set up, as kept beside the
// refresh token (RegistrationFile, mode 0600): the daemon refreshes as that
// client, and a later login reuses it.
type registration struct {
	// Issuer is the authorization server it is a client of: a server that
	// moved to another needs a login again.
	Issuer       string   `json:"issuer"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// RegisteredBy is RegisteredByMetadataDocument or RegisteredDynamically.
	RegisteredBy string `json:"registered_by"`
	// SecretExpiresAt is RFC 7591's client_secret_expires_at (0: never).
	SecretExpiresAt int64 `json:"client_secret_expires_at,omitempty"`
}

// RegistrationFile is where mcpwatch login keeps the client it registered
// for the refresh token in refreshTokenFile: beside it.
func RegistrationFile(refreshTokenFile string) string { return refreshTokenFile + ".client.json" }

// maxRegistrationBytes bounds the registration file read back.
const maxRegistrationBytes = 64 << 10

// readRegistration reads a registration file; a missing one is
// fs.ErrNotExist. It goes through the bounded reader, refusing what ssh
// would: anything but a regular file (a FIFO there hung login, check and
// serve), and a file that is not the user's own or that others may write
// (one planted in a shared directory would pick the client the refresh
// token is sent as).
func readRegistration(path string) (*registration, error) {
	b, err := readfile.ReadPrivate(path, maxRegistrationBytes)
	if err != nil {
		return nil, err
	}
	var r registration
	if json.Unmarshal(b, &r) != nil || r.ClientID == "" {
		return nil, fmt.Errorf("%s is not a client registration mcpwatch login wrote", path)
	}
	return &r, nil
}

// writeRegistration stores a registration, mode 0600, atomically, never
// through a symlink.
func writeRegistration(path string, r *registration) error {
	b, err := json.MarshalIndent(r, "", "  ") //nolint:gosec // G117: the registration file is where the client's secret is kept (0600)
	if err != nil {
		return err
	}
	return atomicfile.WriteSecret(path, append(b, '\n'))
}

// identity is the client to authenticate as, for ep. The caller holds c.mu.
func (c *Client) identity(ep *endpoints) (identity, error) {
	if c.cfg.ClientID != "" {
		return identity{id: c.cfg.ClientID, secret: c.cfg.ClientSecret, method: chooseAuthMethod(c.cfg, ep)}, nil
	}
	file := RegistrationFile(c.cfg.RefreshTokenFile)
	r, err := readRegistration(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return identity{}, &probe.Failure{Reason: probe.ReasonConfig, Err: fmt.Errorf(
			"server %q: auth sets no client_id, and %s holds no client mcpwatch login registered: run 'mcpwatch login %s' to sign in, or set auth.client_id",
			c.cfg.Server, file, c.cfg.Server)}
	case err != nil:
		return identity{}, &probe.Failure{Reason: probe.ReasonConfig, Err: fmt.Errorf(
			"server %q: auth sets no client_id, and the client registration %w; run 'mcpwatch login %s' again", c.cfg.Server, err, c.cfg.Server)}
	case ep.issuer != "" && r.Issuer != "" && trimSlash(r.Issuer) != trimSlash(ep.issuer):
		return identity{}, &probe.Failure{Reason: probe.ReasonConfig, Err: fmt.Errorf(
			"server %q: the client in %s is registered with authorization server %s, and the server now names %s: run 'mcpwatch login %s' again",
			c.cfg.Server, file, show(r.Issuer), show(ep.issuer), c.cfg.Server)}
	}
	c.regSecret = r.ClientSecret
	method := r.AuthMethod
	if method == "" {
		method = AuthNone
		if r.ClientSecret != "" {
			method = AuthClientSecretBasic
		}
	}
	return identity{id: r.ClientID, secret: r.ClientSecret, method: method, reg: r}, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

package probe

import (
	"net/http"
	"time"
)

// Authorizer gives the requests of a remote target their credentials: an
// OAuth client, as a rule. The probe knows nothing of how.
type Authorizer interface {
	// RoundTripper wraps the probe's own transport (base: the target's TLS
	// settings and headers, the probe's connections) for one probe. What it
	// returns sees every request of the probe: it may add an Authorization
	// header to requests for the server's origin and answer a 401 or 403 by
	// getting a new token and sending the request again, once. It returns a
	// *Failure to say why it could not authorize (which step failed), and
	// ends by the request's context deadline.
	RoundTripper(base http.RoundTripper) http.RoundTripper
}

// CredentialStatus is what is known of the credentials a probe used, as
// the caller that set them up reports it (Run does not fill it).
type CredentialStatus struct {
	// Expiries are the credentials whose expiry is knowable.
	Expiries []CredentialExpiry `json:"expiries,omitempty"`
	// OAuth is set when the server is reached with an OAuth client, which
	// the refresh fields below are about.
	OAuth bool `json:"oauth,omitempty"`
	// LastRefresh is when a token request last succeeded; zero if none has.
	LastRefresh time.Time `json:"last_refresh,omitzero"`
	// RefreshFailures counts failed token requests by reason since the
	// client was set up.
	RefreshFailures map[string]uint64 `json:"refresh_failures,omitempty"`
	// Given are the credentials the server is given (the caller's
	// configuration names them), each with whether it had a value when
	// the probe was made; a probe with one empty is not made (reason
	// credential_missing).
	Given []GivenCredential `json:"given,omitempty"`
	// Rejected is how the server rejected its credential, when the probe
	// failed for it (reason credential_rejected).
	Rejected *CredentialRejection `json:"rejected,omitempty"`
	// Issuer are the answers of the services that issued the server's
	// credentials, asked about them directly (internal/issuer), one a
	// credential.
	Issuer []IssuerCheck `json:"issuer,omitempty"`
}

// IssuerVerdict is what the service that issued a credential said of it.
type IssuerVerdict string

const (
	// IssuerAccepted: the service takes the credential.
	IssuerAccepted IssuerVerdict = "accepted"
	// IssuerRejected: the service refused it (wrong, revoked, expired).
	IssuerRejected IssuerVerdict = "rejected"
	// IssuerUnreachable: the service could not be asked (no connection,
	// TLS, a 5xx): never a rejection.
	IssuerUnreachable IssuerVerdict = "unreachable"
	// IssuerLimited: the service asked to slow down (429), and had not
	// yet said what it makes of the credential.
	IssuerLimited IssuerVerdict = "limited"
	// IssuerUnknown: an answer its documentation does not describe (a
	// redirect, a 403 it does not name), or a check that could not be
	// made (Note says why): not judged.
	IssuerUnknown IssuerVerdict = "unknown"
)

// IssuerCheck is what the service that issued a credential said of it,
// asked at its documented identity endpoint.
type IssuerCheck struct {
	// Credential names it without its value
	// ("env:GITHUB_PERSONAL_ACCESS_TOKEN").
	Credential string `json:"credential"`
	// Service is the issuer catalogue's ID of the service ("github").
	Service string `json:"service"`
	// Endpoint is where it was asked: "api.github.com GET /rate_limit".
	Endpoint string `json:"endpoint"`
	// Verdict is what the service said.
	Verdict IssuerVerdict `json:"verdict"`
	// Checked is when the service answered (or was found unreachable).
	Checked time.Time `json:"checked"`
	// Status is the HTTP status of the answer; 0 for none.
	Status int `json:"status,omitempty"`
	// Quote is the service's own words, one line, scrubbed of secrets.
	Quote string `json:"quote,omitempty"`
	// Note says why a check was not made or not judged.
	Note string `json:"note,omitempty"`
	// Expiry is when the credential expires, when the service tells.
	Expiry *time.Time `json:"expiry,omitempty"`
	// Scopes are the scopes the service says the credential has, when it
	// tells them; MissingScopes those the server's tools need that it
	// lacks.
	Scopes        []string `json:"scopes,omitempty"`
	MissingScopes []string `json:"missing_scopes,omitempty"`
	// RetryAfter is how long the service asked to wait, in seconds, after
	// a limited answer.
	RetryAfter float64 `json:"retry_after_seconds,omitempty"`
}

// GivenCredential is one credential a server is given, by name only.
type GivenCredential struct {
	// Credential names it without its value: "env:GITHUB_TOKEN",
	// "header:Authorization", "auth:client_secret".
	Credential string `json:"credential"`
	// Present is false when it expanded to an empty value.
	Present bool `json:"present"`
	// Why says what was empty, for one that is not present: the reference
	// as written ("${GITHUB_TOKEN} is set but empty", "${file:/run/token}
	// is an empty file"), or the message of a ${VAR:?message}.
	Why string `json:"why,omitempty"`
}

// CredentialRejection is a server's refusal of its credential, as the
// caller's classifier read it.
type CredentialRejection struct {
	// Credential names the credential to renew, without its value
	// ("env:GITHUB_PERSONAL_ACCESS_TOKEN"); several are joined with " or ",
	// and it is empty when the configuration names none.
	Credential string `json:"credential,omitempty"`
	// Marker is what showed the rejection ("HTTP 401", "bad credentials").
	Marker string `json:"marker"`
	// Quote is the server's own words, one line, scrubbed of secrets.
	Quote string `json:"quote"`
}

// UpstreamFailure is a server's word that it could not reach the service
// it fronts, as the caller's classifier read it.
type UpstreamFailure struct {
	// Marker is what showed it ("fetch failed", "econnrefused", "status
	// 503").
	Marker string `json:"marker"`
	// Quote is the server's own words, one line, scrubbed of secrets.
	Quote string `json:"quote"`
}

// CredentialExpiry is when one credential expires.
type CredentialExpiry struct {
	// Credential names it without its value: "oauth_access_token",
	// "oauth_refresh_token", "header:Authorization", "env:API_TOKEN".
	Credential string    `json:"credential"`
	Expiry     time.Time `json:"expiry"`
	// Renewed is set for a credential mcpwatch renews by itself before it
	// expires (an OAuth access token): its expiry is no cause for alarm.
	Renewed bool `json:"renewed,omitempty"`
}

// ParseChallenge reads the WWW-Authenticate headers of a 401 or 403: the
// Bearer challenge, else the first one, else nil.
func ParseChallenge(h http.Header) *Challenge { return parseChallenge(h) }

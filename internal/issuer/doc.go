// Package issuer asks the service that issued a credential whether it
// still takes it: the credential's own check, with no tool call. A
// catalogue of services (services/*.json) says how each one's credentials
// are recognised and which documented request (an identity or
// key-validation endpoint that changes nothing and costs no quota) tells
// whether one is good, when it expires and what it may do.
//
// A credential is tied to a service only by two signals, never a guess:
// its format, and a name, a package or a URL the catalogue ties to that
// service (Match). It then goes only over verified HTTPS, to the
// service's documented base or to the base the server's own configuration
// names for a self-hosted instance; never to a redirect, never into a log
// or an error (Check). A Checker asks once per credential, shared by every
// server that uses it, at most every interval, backing off when the
// service says to.
//
// It knows nothing of configuration files, probes or metrics: the runner
// hands it a server's built credentials and folds the answer into the
// probe's result, which the verdict judges.
package issuer

// Verdict is what the issuer said of a credential.
type Verdict string

const (
	// Accepted: the service takes the credential.
	Accepted Verdict = "accepted"
	// Rejected: the service refused it (wrong, revoked, expired).
	Rejected Verdict = "rejected"
	// Unreachable: the service could not be asked (no connection, TLS,
	// a 5xx): never a rejection.
	Unreachable Verdict = "unreachable"
	// Limited: the service said to slow down (429); the check backs off.
	Limited Verdict = "limited"
	// Unknown: an answer the catalogue does not describe (a 3xx, a 403
	// its documentation does not name): not judged, reported.
	Unknown Verdict = "unknown"
)

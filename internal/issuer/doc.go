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

import "github.com/mcpwatch/mcpwatch/probe"

// Verdict is what the issuer said of a credential (probe's vocabulary,
// which the verdict judges).
type Verdict = probe.IssuerVerdict

// The verdicts, as probe names them.
const (
	Accepted    = probe.IssuerAccepted
	Rejected    = probe.IssuerRejected
	Unreachable = probe.IssuerUnreachable
	Limited     = probe.IssuerLimited
	Unknown     = probe.IssuerUnknown
)

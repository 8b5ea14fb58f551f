// Package credential is the one rule that reads what an MCP server
// answered, or wrote to stderr as it died, for two things a watch must
// name rather than call a broken tool: the server's credential was
// rejected (a token that is wrong, revoked, expired, or no longer grants
// what is asked), or the server could not reach the service it fronts
// (its upstream is unreachable). The preflight (check) and the daemon
// (serve) judge with it, for canary calls (contracts), probes and a stdio
// server's stderr (runner), so each reads the same everywhere.
//
// The rule reads by meaning, not from a list of services' messages:
//
//   - structure first: any JSON document in an error-shaped answer, whose
//     status-like member (status, statusCode, code, httpStatus, ...) is 401
//     or 403, or whose codes and types name the condition (unauthorized,
//     invalid_auth, authentication_error, GraphQL's extensions.code
//     UNAUTHENTICATED); an HTTP status in the text ("401 Unauthorized",
//     "status code 403");
//   - then words, as a small grammar: a credential noun (token, API key,
//     secret, password, authentication, signature...) near a rejection word
//     (invalid, expired, revoked, malformed, incorrect, missing...), in
//     either order, and standalone marks (unauthorized, unauthenticated,
//     re-authorize, bad credentials, insufficient scope...);
//   - guards, which win: network and upstream failures (ECONNREFUSED,
//     getaddrinfo, fetch failed, TLS, 502/503/504) make the answer
//     Unreachable, never Rejected; a rate limit, a not-found, a validation
//     error, a permission denied on a path, the language-model sense of
//     "token" make it neither. A successful result that is data (long, or
//     a JSON document without an error's shape) is never read.
//
// Its cost is bounded: only error-shaped answers and short messages are
// read, and of each at most the first maxRead bytes (of a stderr tail,
// the last).
//
// It knows nothing of configuration, contracts or metrics. The corpus
// test (testdata/corpus.json) holds the documented answers of many
// services it is measured on.
package credential

import (
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Evidence is what came back, as the caller read it. A field that does not
// apply is zero.
type Evidence struct {
	// Given says the server was given a credential (an env or header value
	// whose name says credential, an auth: block, a credential argument).
	Given bool
	// HTTPStatus is the status of the MCP transport's response (streamable
	// HTTP, SSE): 401 or 403 there is the server refusing the request, and
	// the credential when it was given one (without one, a 401 says it
	// needs one: nothing was rejected).
	HTTPStatus int
	// RPCMessage is the message of a JSON-RPC error answered instead of a
	// result.
	RPCMessage string
	// IsError is a CallToolResult with isError: true; Text is then its
	// message.
	IsError bool
	// ReportedError is the "error" member of a success result's JSON
	// document (as JSON: "\"invalid_auth\""), when it reports one.
	ReportedError string
	// Text is what the result says: its text content (for an isError
	// result, the error). A success result's text is read only when it is
	// a short message, or a JSON document shaped as an error (Notion
	// answers its 401 as a normal result); anything else is data.
	Text        string
	HasDocument bool
	// Stderr is the tail of a stdio server's stderr, given when the server
	// exited or never answered: what it said as it died; or, with
	// Running, what it logged as it went on to serve. A rejection read
	// there needs Given (a server given nothing that complains of a
	// missing key lacks one, which is not this rule's to say).
	Stderr string
	// Running says the server answered its probe with its tools: its
	// stderr is read more strictly (see readRunning).
	Running bool
	// Error is the probe's or the call's one-line error, when it failed
	// on the wire (read for a transport status only).
	Error string
}

// Kind is what the classifier read in an answer: the failure reason it
// makes of a probe or a canary call (probe.Reason is the one vocabulary of
// failure reasons).
type Kind = probe.Reason

const (
	// KindNone: neither a rejected credential nor an unreachable upstream
	// (a success, another error, or one a guard says is not about the
	// credential: a rate limit, a not-found, a validation error).
	KindNone = probe.ReasonNone
	// KindRejected: the server, or the service behind it, rejected the
	// credential (wrong, revoked, expired, or lacking a scope).
	KindRejected = probe.ReasonCredentialRejected
	// KindUnreachable: the server could not reach the service it fronts
	// (connection refused, DNS, TLS, a timeout, a 502/503/504 from it).
	KindUnreachable = probe.ReasonUpstreamUnreachable
	// KindRateLimited: the service (or the server) refused the request
	// for a rate limit or a quota (429, "rate limit exceeded", "quota"):
	// not the credential's fault, and a reason to ask less often. Read
	// only in an answer shaped as an error, never in a success's text.
	KindRateLimited = probe.ReasonRateLimited
)

// Outcome is the classifier's answer: one kind, what showed it and the
// server's own words.
type Outcome struct {
	Kind Kind `json:"kind,omitempty"`
	// Marker is what showed it: "HTTP 401" (the MCP transport), "status
	// 401" (a JSON member), "invalid … api key" (words), "fetch failed".
	Marker string `json:"marker,omitempty"`
	// Source says which part of the rule read it: the MCP transport's
	// status, a JSON member, an HTTP status in the text, a credential noun
	// with a rejection word, a mark, a network failure.
	Source string `json:"source,omitempty"`
	// Quote is the server's own words around the marker, on one line and
	// at most maxQuoteBytes; not yet escaped for a terminal or a page (the
	// caller sanitises, as for anything a server sent), and scrubbed of
	// secrets only if the evidence was.
	Quote string `json:"quote,omitempty"`
	// RetryAfter and ResetAt are when a rate-limited answer says to ask
	// again, when it says (see retryAfter): a wait, or a time; zero when
	// it does not.
	RetryAfter time.Duration `json:"-"`
	ResetAt    time.Time     `json:"-"`
}

// Rejection says that, and how, a server rejected its credential.
type Rejection struct {
	// Credential names the credential to renew ("env:GITHUB_TOKEN"); the
	// classifier leaves it to the caller, who knows the configuration.
	Credential string `json:"credential,omitempty"`
	// Marker, Source and Quote are the Outcome's.
	Marker string `json:"marker"`
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// Upstream says that, and how, a server said it could not reach the
// service it fronts.
type Upstream struct {
	// Marker, Source and Quote are the Outcome's.
	Marker string `json:"marker"`
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// maxQuoteBytes bounds a quote: it goes into alert summaries.
const maxQuoteBytes = 200

// maxRead is how much of one text is read: an error message that has
// not said why within 4 KiB does not say it later, and a hostile 1 MiB
// answer costs no more than a short one.
const maxRead = 4 << 10

// maxPlainText is the longest success-result text read as a message: a
// plain-text result longer than a few sentences is data, not an error.
const maxPlainText = 300

// Classify reads the evidence: a rejected credential, an unreachable
// upstream, or neither. The MCP transport's own 401 or 403 comes first;
// then each error-shaped text in turn (a JSON-RPC error's message, an
// isError result, a success result's reported error or error-shaped
// document, a short plain-text result, the stderr tail), the first that
// says either deciding.
func Classify(e Evidence) Outcome {
	switch e.HTTPStatus {
	case 429:
		o := Outcome{Kind: KindRateLimited, Marker: "HTTP 429", Source: "the MCP server's HTTP transport",
			Quote: quote(firstNonEmpty(e.RPCMessage, e.Error, "HTTP 429"))}
		o.RetryAfter, o.ResetAt = retryAfter(e.RPCMessage + "\n" + e.Error)
		return o
	case 401, 403:
		if !e.Given {
			return Outcome{}
		}
		marker := "HTTP 401"
		if e.HTTPStatus == 403 {
			marker = "HTTP 403"
		}
		return Outcome{Kind: KindRejected, Marker: marker, Source: "the MCP server's HTTP transport",
			Quote: quote(firstNonEmpty(e.RPCMessage, e.Error, marker))}
	}
	var texts []string
	plain := false // a success's short text: no rate limit is read there
	switch {
	case e.RPCMessage != "":
		texts = []string{e.RPCMessage}
	case e.IsError:
		texts = []string{e.Text}
	case e.ReportedError != "":
		texts = []string{e.Text, e.ReportedError}
	case errorShapedDocument(e.Text):
		texts = []string{e.Text}
	case !e.HasDocument && len(e.Text) <= maxPlainText && !looksLikeDocument(e.Text):
		texts, plain = []string{e.Text}, true
	}
	for _, t := range texts {
		o := read(head(t))
		if o.Kind == KindRateLimited && plain {
			// "Quota: 500 of 1000 used" is data.
			return Outcome{}
		}
		if o.Kind != KindNone {
			return o
		}
	}
	if e.Stderr != "" && e.Running {
		if !e.Given {
			return Outcome{}
		}
		o := readRunning(ownLines(tail(e.Stderr)))
		if o.Kind != KindNone {
			o.Source += ", on the stderr of a server that kept serving"
		}
		return o
	}
	if e.Stderr != "" {
		o := read(ownLines(tail(e.Stderr)))
		// A dying server's rate limit says nothing its exit does not.
		if o.Kind == KindUnreachable || o.Kind == KindRejected && e.Given {
			o.Source += ", on stderr"
			return o
		}
	}
	return Outcome{}
}

// Rejected reports whether the evidence shows a rejected credential: the
// Outcome of Classify when its kind is KindRejected, as a Rejection.
func Rejected(e Evidence) (Rejection, bool) {
	o := Classify(e)
	if o.Kind != KindRejected {
		return Rejection{}, false
	}
	return o.Rejection(""), true
}

// Rejection is o as a Rejection of the named credential.
func (o Outcome) Rejection(credential string) Rejection {
	return Rejection{Credential: credential, Marker: o.Marker, Source: o.Source, Quote: o.Quote}
}

// Upstream is o as an Upstream.
func (o Outcome) Upstream() Upstream {
	return Upstream{Marker: o.Marker, Source: o.Source, Quote: o.Quote}
}

// ToRenew names the credential to renew when a server given these
// credentials ("env:GITHUB_TOKEN", "header:Authorization") rejects one: the
// only one, or each of several joined by " or "; empty when the
// configuration names none (a password inside a database URL argument, a
// variable the server inherits).
func ToRenew(given []string) string { return strings.Join(given, " or ") }

// Describe words a rejection for a report or a log line: "credential
// env:GITHUB_TOKEN rejected: <the server's words>".
func (r Rejection) Describe() string {
	if r.Credential == "" {
		return "credential rejected: " + r.Quote
	}
	return "credential " + r.Credential + " rejected: " + r.Quote
}

// Describe words an unreachable upstream for a report or a log line:
// "upstream unreachable: <the server's words>".
func (u Upstream) Describe() string { return "upstream unreachable: " + u.Quote }

// head is the part of an answer that is read.
func head(s string) string {
	if len(s) <= maxRead {
		return s
	}
	return s[:runeStart(s, maxRead)]
}

// tail is the part of a stderr tail that is read: its end, where a dying
// server says why.
func tail(s string) string {
	if len(s) <= maxRead {
		return s
	}
	i := len(s) - maxRead
	for i < len(s) && i > 0 && (s[i]&0xC0) == 0x80 {
		i++
	}
	return s[i:]
}

// readRunning reads the stderr of a server that answered its probe: what
// it logged as it started and served on. A server that logs a rejection
// at start ("API error (401): Invalid token") and lists its tools all the
// same serves an agent nothing that works; but a running server logs much
// that is not about its credential, so the reading is stricter than of a
// dying server's last words:
//
//   - only a rejection counts, and one that says a credential was refused:
//     words of an absent one (missing, required, not provided, is empty,
//     "authentication required") are about another credential, one the
//     server was not given or may do without, since it serves;
//   - a network failure in the same tail wins (upstream_unreachable: the
//     server could not tell a good credential from a bad one), but alone
//     it says nothing of a server that serves: a start-up fetch to a
//     telemetry host that failed is no outage of its service, which its
//     canary calls judge.
func readRunning(text string) Outcome {
	var network, rest strings.Builder
	for line := range strings.Lines(text) {
		if read(line).Kind == KindUnreachable {
			network.WriteString(line)
		} else {
			rest.WriteString(line)
		}
	}
	o := read(rest.String())
	if o.Kind != KindRejected || saysAbsent(o.Marker) {
		return Outcome{}
	}
	if network.Len() > 0 {
		return read(network.String())
	}
	return o
}

// absent are the words of a credential that is not there, as a marker
// ends or starts with them ("missing … key", "authentication required").
var absent = []string{"missing", "required", "requires", "provided", "supplied", "empty"}

// saysAbsent reports whether a rejection's marker is one of an absent
// credential.
func saysAbsent(marker string) bool {
	for _, w := range strings.Fields(marker) {
		if slices.Contains(absent, w) {
			return true
		}
	}
	return false
}

// ownLines drops the lines npm and npx write of themselves (a registry's
// own "E401", a deprecation warning): they are about installing the
// package, not about the server's credential.
func ownLines(s string) string {
	if !strings.Contains(s, "npm ") {
		return s
	}
	var b strings.Builder
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "npm ") || strings.HasPrefix(t, "npm:") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

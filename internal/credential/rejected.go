// Package credential is the one rule that tells, from what an MCP server
// answered, that it rejected the credential it was given: a token that is
// wrong, revoked or expired. The preflight (check) and the daemon (serve)
// both judge with it, for canary calls (contracts) and for probes
// (runner), so a rejected credential reads the same everywhere: reason and
// state credential_rejected, with the server's own words.
//
// The evidence is what came back: an HTTP 401 or 403 on the transport, a
// JSON-RPC error, an isError result, a success result whose JSON document
// reports an error (Slack answers {"ok":false,"error":"invalid_auth"} with
// HTTP 200 and no isError), or a short plain-text result. The words that
// mark a rejection are a bounded, documented list (phrases), each taken
// from what a real service or a common library answers; the recorded
// answers of the pinned npm servers (testdata/peers/responses) are its
// fixtures. A successful answer that merely mentions such words (a search
// for "bad credentials") is never a rejection: only an answer that is an
// error, or a short message with no JSON document, is read.
//
// It knows nothing of configuration, contracts or metrics.
package credential

import (
	"strings"
	"unicode/utf8"
)

// phrase is one marker of a rejected credential, and who answers with it.
type phrase struct {
	Text   string // lower case; matched case-insensitively, at word boundaries
	Source string // the service or library whose answer it is
}

// phrases are every marker the classifier knows, in the order they are
// tried. The list is bounded on purpose: each entry is what a real
// service answers to a wrong, revoked or expired credential, and would not
// appear in the error of anything else. docs/contracts-format.md lists them.
var phrases = []phrase{
	{"bad credentials", "GitHub REST API (401), as server-github passes it on: \"Authentication Failed: Bad credentials\""},
	{"invalid_auth", "Slack Web API: a token it never issued"},
	{"token_revoked", "Slack Web API: a revoked token"},
	{"token_expired", "Slack Web API: an expired token"},
	{"account_inactive", "Slack Web API: the token's user or bot was deactivated"},
	{"subscription_token_invalid", "Brave Search API (422)"},
	{"password authentication failed for user", "PostgreSQL (SQLSTATE 28P01), as node-postgres and psql pass it on"},
	{"invalid_token", "OAuth 2.0 bearer token error (RFC 6750): expired, revoked or malformed"},
	{"invalid_grant", "OAuth 2.0 token endpoint (RFC 6749): the refresh token or code is expired or revoked"},
	{"invalid_client", "OAuth 2.0 token endpoint (RFC 6749): the client's secret or key is not accepted"},
	{"jwt expired", "jsonwebtoken (Node)"},
	{"token is expired", "golang-jwt"},
	{"token has expired", "many APIs' expired-token message"},
	{"incorrect api key provided", "OpenAI API (401)"},
	{"invalid api key", "many APIs' wrong-key message (Anthropic, SendGrid, ...)"},
	{"api key not valid", "Google APIs (400 API_KEY_INVALID)"},
	{"401 unauthorized", "an HTTP status line passed on in an error message"},
	{"status code 401", "axios and other HTTP clients: \"Request failed with status code 401\""},
}

// Evidence is what came back, as the caller read it. A field that does not
// apply is zero.
type Evidence struct {
	// Given says the server was given a credential (an env or header value
	// whose name says credential, or an auth: block).
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
	// short and has no JSON document (HasDocument false).
	Text        string
	HasDocument bool
	// Error is the probe's or the call's one-line error, when it failed
	// on the wire (read for a transport status only).
	Error string
}

// Rejection says that, and how, a server rejected its credential.
type Rejection struct {
	// Credential names the credential to renew ("env:GITHUB_TOKEN"); the
	// classifier leaves it to the caller, who knows the configuration.
	Credential string `json:"credential,omitempty"`
	// Marker is what showed it: "HTTP 401", "HTTP 403" or a Phrase's text.
	Marker string `json:"marker"`
	// Source is who answers with that marker.
	Source string `json:"source"`
	// Quote is the server's own words, on one line and at most
	// MaxQuoteBytes; not yet escaped for a terminal or a page (the caller
	// sanitises, as for anything a server sent), and scrubbed of secrets
	// only if the evidence was.
	Quote string `json:"quote"`
}

// maxQuoteBytes bounds a Rejection's quote: it goes into alert summaries.
const maxQuoteBytes = 200

// maxPlainText is the longest success-result text read as a message: a
// result longer than a sentence or two is data, not an error message.
const maxPlainText = 300

// Rejected reports whether the evidence shows a rejected credential.
func Rejected(e Evidence) (Rejection, bool) {
	switch e.HTTPStatus {
	case 401, 403:
		if !e.Given {
			return Rejection{}, false
		}
		marker := "HTTP 401"
		if e.HTTPStatus == 403 {
			marker = "HTTP 403"
		}
		return Rejection{Marker: marker, Source: "the MCP server's HTTP transport", Quote: quote(firstNonEmpty(e.RPCMessage, e.Error, marker))}, true
	}
	var texts []string
	switch {
	case e.RPCMessage != "":
		texts = []string{e.RPCMessage}
	case e.IsError:
		texts = []string{e.Text}
	case e.ReportedError != "":
		texts = []string{e.ReportedError, e.Text}
	case !e.HasDocument && len(e.Text) <= maxPlainText:
		texts = []string{e.Text}
	}
	for _, t := range texts {
		if p, ok := match(t); ok {
			return Rejection{Marker: p.Text, Source: p.Source, Quote: quoteAround(firstNonEmpty(e.RPCMessage, e.Text, t), p.Text)}, true
		}
	}
	return Rejection{}, false
}

// match finds the first phrase in s, at word boundaries.
func match(s string) (phrase, bool) {
	lower := strings.ToLower(s)
	for _, p := range phrases {
		for from := 0; ; {
			i := strings.Index(lower[from:], p.Text)
			if i < 0 {
				break
			}
			start := from + i
			end := start + len(p.Text)
			if (start == 0 || !wordByte(lower[start-1])) && (end == len(lower) || !wordByte(lower[end])) {
				return p, true
			}
			from = start + 1
		}
	}
	return phrase{}, false
}

// wordByte: a byte that continues a word or a code (invalid_auth in
// not_invalid_auth_x is no marker).
func wordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z'
}

// quote puts s on one line, at most MaxQuoteBytes, cut at a rune boundary.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxQuoteBytes {
		return s
	}
	return s[:runeStart(s, maxQuoteBytes)] + "…"
}

// quoteAround is quote, but when the marker would be cut off it keeps the
// part of s around the marker instead of its start: the quote must show
// why it is a rejection.
func quoteAround(s, marker string) string {
	s = strings.Join(strings.Fields(s), " ")
	i := strings.Index(strings.ToLower(s), marker)
	if len(s) <= maxQuoteBytes || i < 0 || i+len(marker) <= maxQuoteBytes-len("…") {
		return quote(s)
	}
	start := runeStart(s, max(0, i-maxQuoteBytes/2))
	end := runeStart(s, min(len(s), start+maxQuoteBytes-2*len("…")))
	out := "…" + s[start:end]
	if end < len(s) {
		out += "…"
	}
	return out
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
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

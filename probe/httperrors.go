package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// maxErrorBody bounds what is read of a non-2xx body: enough for a
// JSON-RPC error, and a 500 page is not worth more.
const maxErrorBody = 64 << 10

// discardBody reads what is left of a body that nothing will read, up to
// maxErrorBody, so that the connection it came on carries the next request:
// net/http's HTTP/1.1 transport and the lean one close a connection whose
// body is closed before its end, and over TLS the next request on the
// origin then costs a handshake (a fleet's servers answering 401 made a
// thousand handshakes a minute at 10,000 servers every 15 s).
func discardBody(body io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
}

// httpTransportError turns what net/http returned instead of a response,
// or a failed body read, into a *Failure. The deadline comes first: once it
// has passed, whatever else broke is its consequence.
func httpTransportError(ctx context.Context, err error, what string) error {
	if f := (*Failure)(nil); errors.As(err, &f) {
		return f // not the *url.Error around it, which repeats the URL and its query
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Failure{Reason: ReasonTimeout, Err: fmt.Errorf("%s: no complete answer before the deadline: %w", what, context.DeadlineExceeded)}
	case ctx.Err() != nil:
		return &Failure{Reason: ReasonCanceled, Err: fmt.Errorf("%s: %w", what, ctx.Err())}
	}
	// url.Error repeats the URL, query included; the caller already named
	// the endpoint without it.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if isTLSError(err) {
		return &Failure{Reason: ReasonTLS, Err: fmt.Errorf("%s: %s", what, describeTLS(err))}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Failure{Reason: ReasonClosed, Err: fmt.Errorf("%s: the server closed the connection: %w", what, err)}
	}
	return &Failure{Reason: ReasonConnection, Err: fmt.Errorf("%s: %w", what, err)}
}

func isTLSError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	if errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	// An alert either side sent in the handshake (a server that takes no
	// TLS version or cipher the client offers, or asks a certificate of
	// it) is a net.OpError of these operations around an unexported type.
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "remote error" || op.Op == "local error")
}

// httpStatusError maps a response that is not 2xx. 401 and 403 are
// authorization outcomes with their challenge; a body that is a JSON-RPC
// error becomes an *RPCError carrying the status (era detection reads the
// 400 and 404 bodies); anything else is http_status with at most one short
// line of the body. Header values never reach the message.
func httpStatusError(resp *http.Response, method, where string, redirects int) error {
	defer discardBody(resp.Body)
	what := method + " to " + where
	code := resp.StatusCode
	status := fmt.Sprintf("HTTP %d", code)
	if text := http.StatusText(code); text != "" {
		status += " " + text
	}
	switch {
	case code == http.StatusUnauthorized:
		ch := parseChallenge(resp.Header)
		fix := "check the Authorization header"
		if ch != nil && ch.ResourceMetadata != "" && resp.Request != nil && resp.Request.Header.Get("Authorization") == "" {
			// RFC 9728: the server names its OAuth metadata.
			fix = "the server wants an OAuth token: configure auth: {type: oauth, ...} for it (mcpwatch probe: --oauth-client-id ...)"
		}
		return &Failure{Reason: ReasonUnauthorized, HTTPStatus: code, Challenge: ch,
			Err: fmt.Errorf("%s: %s: the call itself was refused%s; %s", what, status, challengeNote(ch), fix)}
	case code == http.StatusForbidden:
		ch := parseChallenge(resp.Header)
		if ch != nil && ch.Error == "insufficient_scope" {
			need := ""
			if ch.Scope != "" {
				need = fmt.Sprintf(" (it asks for scope %q)", ch.Scope)
			}
			return &Failure{Reason: ReasonForbidden, HTTPStatus: code, Challenge: ch,
				Err: fmt.Errorf("%s: %s: insufficient scope%s; the token needs more scope", what, status, need)}
		}
		return &Failure{Reason: ReasonForbidden, HTTPStatus: code, Challenge: ch,
			Err: fmt.Errorf("%s: %s without an insufficient_scope challenge: refused by policy or an Origin check", what, status)}
	case code >= 300 && code < 400:
		return &Failure{Reason: ReasonHTTPStatus, HTTPStatus: code,
			Err: fmt.Errorf("%s: %s not followed (at most %d redirects, and a POST only through 307 or 308); configure the final URL", what, status, redirects)}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if msg, err := parseMessage(body); err == nil && msg.Error != nil {
		rpcErr := *msg.Error
		rpcErr.HTTPStatus = code
		rpcErr.Method = method
		return &rpcErr
	}
	line := firstLine(body, 120)
	if line != "" {
		line = ": " + line
	}
	if wait, ok := retryAfter(resp.Header, time.Now()); ok && (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) {
		// The wait, as a number mcpwatch read: what a caller slows down
		// by (internal/credential reads "Retry-After: N").
		status += fmt.Sprintf(" (Retry-After: %d)", int64(wait/time.Second))
	}
	return &Failure{Reason: ReasonHTTPStatus, HTTPStatus: code, Err: fmt.Errorf("%s: %s%s", what, status, line)}
}

// retryAfter reads a response's Retry-After (RFC 9110 10.2.3): seconds,
// or an HTTP date, as a wait from now.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, 366*24*3600)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0).Round(time.Second), true
	}
	return 0, false
}

// challengeNote summarises a challenge for an error line.
func challengeNote(ch *Challenge) string {
	if ch == nil {
		return " (no WWW-Authenticate challenge)"
	}
	var parts []string
	if ch.Error != "" {
		parts = append(parts, fmt.Sprintf("error=%q", ch.Error))
	}
	if ch.Scope != "" {
		parts = append(parts, fmt.Sprintf("scope=%q", ch.Scope))
	}
	if len(parts) == 0 {
		return fmt.Sprintf(" (%s challenge)", ch.Scheme)
	}
	return fmt.Sprintf(" (%s %s)", ch.Scheme, strings.Join(parts, ", "))
}

// firstLine is the first non-blank line of a body, printable characters
// only, cut to n bytes: enough to tell a proxy's page from a server's
// message, never a whole page.
func firstLine(body []byte, n int) string {
	for _, line := range bytes.Split(body, []byte("\n")) {
		s := strings.Map(func(r rune) rune {
			if unicode.IsPrint(r) {
				return r
			}
			return -1
		}, string(bytes.TrimSpace(line)))
		if s != "" {
			return sanitize.Truncate(s, n)
		}
	}
	return ""
}

// readBoundedBody reads a whole body of at most max bytes; a longer one
// fails too_large without being held in memory.
func readBoundedBody(ctx context.Context, resp *http.Response, max int64, what string) ([]byte, error) {
	if resp.ContentLength > max {
		return nil, &Failure{Reason: ReasonTooLarge, Err: fmt.Errorf("%s: the body is %d bytes, over the cap of %d", what, resp.ContentLength, max)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, httpTransportError(ctx, err, what)
	}
	if int64(len(body)) > max {
		return nil, &Failure{Reason: ReasonTooLarge, Err: fmt.Errorf("%s: the body is over the cap of %d bytes", what, max)}
	}
	return body, nil
}

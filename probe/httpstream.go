package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// A response that comes as an event stream: reading it to the answer, and
// resuming a stream dropped before its answer.

// Resuming a response stream that dropped (2025-11-25: a server may end a
// response stream after its priming event and a retry: interval, and the
// client resumes with a GET carrying the last event id).
const (
	// maxStreamResumes bounds how often one response is resumed, or, in
	// the modern era, sent again.
	maxStreamResumes = 5
	// defaultStreamRetry is the wait before resuming when the server set
	// no retry: interval.
	defaultStreamRetry = time.Second
)

// streamDropped is a response stream that ended, or broke, before the
// response: resumable, unless the request was modern or the stream gave no
// event id.
type streamDropped struct {
	cause  *Failure // as it would be reported
	modern bool
	note   string // why it was not resumed, when it was not
}

func (e *streamDropped) Error() string { return e.failure().Error() }

// failure is the drop as the probe reports it, with the note.
func (e *streamDropped) failure() *Failure {
	if e.note == "" {
		return e.cause
	}
	return &Failure{Reason: e.cause.Reason, HTTPStatus: e.cause.HTTPStatus, Err: fmt.Errorf("%w (%s)", e.cause.Err, e.note)}
}

// readStream reads the event stream of one request until the response with
// its id: the priming event (empty data) is skipped, server requests (ping)
// are answered with their own POST, and notifications go to the observer.
// A legacy stream that drops before the response is resumed with a GET
// carrying Last-Event-ID, after the server's retry: interval, within ctx
// and at most maxStreamResumes times; a modern one is handed back as
// *streamDropped for call to send again.
func (c *httpConn) readStream(ctx context.Context, body io.Reader, id json.RawMessage, what string, modern bool) (*message, error) {
	events := newSSEReader(body, c.maxBytes)
	var (
		last   string // the last event id seen, across resumptions
		retry  = defaultStreamRetry
		bodies []io.Closer // the resumed streams' bodies
	)
	defer func() {
		for _, b := range bodies {
			_ = b.Close() // read as far as needed; nothing more to say
		}
	}()
	for resumed := 0; ; resumed++ {
		msg, err := c.readEvents(ctx, events, id, what, &last)
		if events.hasRetry {
			retry = events.retry
		}
		var drop *streamDropped
		if !errors.As(err, &drop) {
			return msg, err
		}
		drop.modern = modern
		switch {
		case modern:
			return nil, drop
		case last == "":
			drop.note = "the stream gave no event id to resume from"
		case !resumableID(last):
			drop.note = "its last event id cannot be sent back in a header"
		case resumed == maxStreamResumes:
			drop.note = fmt.Sprintf("resumed %d times already", resumed)
		case !timeLeft(ctx, retry):
			drop.note = fmt.Sprintf("no time left before the deadline to wait the server's retry interval of %s and resume", retry)
		}
		if drop.note != "" {
			return nil, drop.failure()
		}
		if err := waitCtx(ctx, retry); err != nil {
			return nil, httpTransportError(ctx, err, what)
		}
		next, err := c.resume(ctx, last, what)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, next)
		events = newSSEReader(next, c.maxBytes)
	}
}

// readEvents reads events until the response with id. A stream that ends
// or breaks first (while ctx lives) is a *streamDropped; *last keeps the
// id of the last event read.
func (c *httpConn) readEvents(ctx context.Context, events *sseReader, id json.RawMessage, what string, last *string) (*message, error) {
	for {
		ev, err := events.next()
		if err != nil {
			var f *Failure
			switch {
			case ctx.Err() != nil, errors.As(err, &f): // the deadline; too_large
				return nil, httpTransportError(ctx, err, what)
			case errors.Is(err, io.EOF):
				return nil, &streamDropped{cause: failf(ReasonClosed, "%s: the event stream ended before the response", what)}
			}
			errors.As(httpTransportError(ctx, err, what), &f)
			return nil, &streamDropped{cause: f}
		}
		if ev.ID != "" {
			*last = ev.ID
		}
		if (ev.Event != "" && ev.Event != "message") || ev.Data == "" {
			continue
		}
		c.obs.recordEvent(ev.Data)
		msg, err := parseMessage([]byte(ev.Data))
		if err != nil {
			return nil, failf(ReasonProtocol, "%s: an event of the stream: %v", what, err)
		}
		switch {
		case msg.isRequest():
			c.answer(ctx, msg)
		case msg.isNotification():
			c.obs.notification(msg.Method)
		case sameID(msg.ID, id):
			return msg, nil
		default:
			return nil, wrongID(what, msg.ID, id)
		}
	}
}

// resume GETs the endpoint with Last-Event-ID and the session's headers,
// and returns the body of the stream that carries on after that event.
func (c *httpConn) resume(ctx context.Context, last, what string) (io.ReadCloser, error) {
	where := "GET " + c.where + " (resuming " + what + ")"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint.String(), nil)
	if err != nil {
		return nil, failf(ReasonConfig, "%s: %v", where, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", last)
	c.mu.Lock()
	version, session := c.version, c.sessionID
	c.mu.Unlock()
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	c.obs.record("send", nil, "GET resume after event "+sanitize.Truncate(last, 60))
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, httpTransportError(ctx, err, where)
	}
	c.obs.recordStatus(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		err := httpStatusError(resp, "GET (resuming "+what+")", c.where, c.client.redirects)
		var f *Failure
		if errors.As(err, &f) {
			f.Err = fmt.Errorf("the response stream dropped before the response, and the server did not resume it: %w", f.Err)
		}
		return nil, err
	}
	if mt := mediaType(resp.Header.Get("Content-Type")); !isEventStream(mt) {
		resp.Body.Close()
		return nil, failf(ReasonProtocol, "%s: HTTP %d with content type %q, not an event stream", where, resp.StatusCode, sanitize.Truncate(mt, 60))
	}
	return resp.Body, nil
}

// resumableID reports whether an event id can go back in Last-Event-ID.
func resumableID(id string) bool {
	if len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] == 0x7f {
			return false
		}
	}
	return true
}

// timeLeft reports whether ctx leaves time to wait d and still do something.
func timeLeft(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) > d
}

// waitCtx is Wait, the stream's retry delay.
var waitCtx = Wait

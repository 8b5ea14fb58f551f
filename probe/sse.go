package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// closeGrace is how long close waits for the canceled stream's reader when
// the caller's context has already ended.
const closeGrace = 200 * time.Millisecond

// sseConn is a legacy HTTP+SSE (2024-11-05) conn: one long GET stream that
// carries every server message, and a POST endpoint, named by the stream's
// first endpoint event, for every client message. Responses are matched to
// requests by id.
type sseConn struct {
	client   *httpClient
	endpoint *url.URL // where messages are POSTed
	where    string   // the endpoint without query or user info, for messages
	stream   string   // the stream URL, likewise
	obs      *observer
	lastID   atomic.Int64

	streamCtx context.Context
	cancel    context.CancelFunc // ends the stream
	done      chan struct{}      // closed when the stream reader has returned

	mu        sync.Mutex
	waiters   map[string]chan *message // by request id
	streamErr error                    // why the stream ended; set before done closes
}

var _ conn = (*sseConn)(nil)

// newSSEConn opens the event stream and waits, within ctx, for its endpoint
// event. The stream then lives until close, which the caller must call.
func newSSEConn(ctx context.Context, t Target, opts Options, obs *observer) (*sseConn, error) {
	client, err := newHTTPClient(t, opts)
	if err != nil {
		return nil, err
	}
	target := client.target
	stream := redacted(target)
	what := "GET event stream " + stream

	// The stream outlives ctx (it is the conn), but until the endpoint is
	// known ctx bounds it.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*sseConn, error) {
		stop()
		cancel()
		client.shutdown()
		return nil, err
	}
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, target.String(), nil)
	if err != nil {
		return fail(failf(ReasonConfig, "%s: %v", what, err))
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	obs.record("send", nil, "GET event stream")
	resp, err := client.Do(req)
	if err != nil {
		return fail(httpTransportError(ctx, err, what))
	}
	obs.recordStatus(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := httpStatusError(resp, "GET event stream", stream, client.redirects)
		resp.Body.Close()
		return fail(err)
	}
	if mt := mediaType(resp.Header.Get("Content-Type")); !isEventStream(mt) {
		resp.Body.Close()
		return fail(failf(ReasonProtocol, "%s: HTTP %d with content type %q, not an event stream", what, resp.StatusCode, sanitize.Truncate(mt, 60)))
	}
	events := newSSEReader(resp.Body, opts.MaxMessageBytes)
	endpoint, err := waitEndpoint(ctx, events, resp.Request.URL, target, what)
	if err == nil && !stop() {
		// ctx ended just as the endpoint arrived: the stream is canceled.
		err = httpTransportError(ctx, ctx.Err(), what)
	}
	if err != nil {
		resp.Body.Close()
		return fail(err)
	}
	c := &sseConn{
		client:    client,
		endpoint:  endpoint,
		where:     redacted(endpoint),
		stream:    stream,
		obs:       obs,
		streamCtx: streamCtx,
		cancel:    cancel,
		done:      make(chan struct{}),
		waiters:   map[string]chan *message{},
	}
	go c.readStream(events, resp.Body)
	return c, nil
}

// waitEndpoint reads the stream until the endpoint event, and resolves its
// URI against the stream's URL. An endpoint on another origin is refused:
// the target's credentials would follow the messages there.
func waitEndpoint(ctx context.Context, events *sseReader, streamURL, target *url.URL, what string) (*url.URL, error) {
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) && ctx.Err() == nil {
			return nil, failf(ReasonClosed, "%s: the stream ended before the endpoint event", what)
		}
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, failf(ReasonTimeout, "%s: no endpoint event before the deadline", what)
			}
			return nil, httpTransportError(ctx, err, what)
		}
		if ev.Event != "endpoint" {
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(ev.Data))
		if err != nil || ev.Data == "" {
			return nil, failf(ReasonProtocol, "%s: the endpoint event does not hold a URI", what)
		}
		endpoint := streamURL.ResolveReference(ref)
		if originOf(endpoint) != originOf(target) {
			return nil, failf(ReasonProtocol, "%s: the endpoint event names another origin (%s://%s); refused", what, endpoint.Scheme, endpoint.Host)
		}
		return endpoint, nil
	}
}

func (c *sseConn) setProtocol(Era, string) {
	// HTTP+SSE has no protocol header and no session header: nothing to do.
}

func (c *sseConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := json.RawMessage(strconv.FormatInt(c.lastID.Add(1), 10))
	body, _, err := encode(id, method, params)
	if err != nil {
		return nil, err
	}
	what := method + " to " + c.where
	reply := make(chan *message, 1)
	key := string(idKey(id))
	c.mu.Lock()
	c.waiters[key] = reply
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, key)
		c.mu.Unlock()
	}()
	select {
	case <-c.done:
		return nil, c.streamFailure(what)
	default:
	}
	if err := c.post(ctx, method, body); err != nil {
		return nil, err
	}
	select {
	case msg := <-reply:
		return responseResult(msg, method, 0)
	case <-c.done:
		select {
		case msg := <-reply: // delivered just before the stream ended
			return responseResult(msg, method, 0)
		default:
			return nil, c.streamFailure(what)
		}
	case <-ctx.Done():
		return nil, httpTransportError(ctx, ctx.Err(), what)
	}
}

func (c *sseConn) notify(ctx context.Context, method string, params any) error {
	body, _, err := encode(nil, method, params)
	if err != nil {
		return err
	}
	return c.post(ctx, method, body)
}

// close ends the stream, waits (within ctx) for its reader, and closes the
// probe's connections.
func (c *sseConn) close(ctx context.Context) {
	c.cancel()
	select {
	case <-c.done:
	case <-ctx.Done():
		// Past the caller's bound already (a probe that timed out): the
		// canceled stream still ends at once, and a short grace keeps its
		// reader from outliving the probe.
		select {
		case <-c.done:
		case <-time.After(closeGrace):
		}
	}
	c.client.shutdown()
}

// post sends one message; its answer, if any, comes on the stream.
func (c *sseConn) post(ctx context.Context, method string, body []byte) error {
	label := method
	if label == "" {
		label = "reply"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return failf(ReasonConfig, "POST %s: %v", c.where, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.obs.record("send", body, "POST")
	resp, err := c.client.Do(req)
	if err != nil {
		return httpTransportError(ctx, err, label+" to "+c.where)
	}
	defer resp.Body.Close()
	c.obs.recordStatus(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return httpStatusError(resp, label, c.where, c.client.redirects)
	}
	discardBody(resp.Body)
	return nil
}

// readStream owns the stream after the endpoint event: it delivers
// responses to their waiters, answers server requests and reports
// notifications, until the stream ends or close cancels it.
func (c *sseConn) readStream(events *sseReader, body io.ReadCloser) {
	defer close(c.done)
	defer body.Close()
	for {
		ev, err := events.next()
		if err != nil {
			c.endStream(err)
			return
		}
		if (ev.Event != "" && ev.Event != "message") || ev.Data == "" {
			continue
		}
		c.obs.recordEvent(ev.Data)
		msg, err := parseMessage([]byte(ev.Data))
		if err != nil {
			c.endStream(failf(ReasonProtocol, "the event stream of %s: %v", c.stream, err))
			return
		}
		switch {
		case msg.isRequest():
			c.answer(msg)
		case msg.isNotification():
			c.obs.notification(msg.Method)
		default:
			c.deliver(msg)
		}
	}
}

func (c *sseConn) deliver(msg *message) {
	key := string(idKey(msg.ID))
	c.mu.Lock()
	reply, ok := c.waiters[key]
	delete(c.waiters, key)
	c.mu.Unlock()
	if !ok {
		c.obs.warn("the event stream of %s carried a response with id %s, which no request is waiting for", c.stream, sanitize.Truncate(key, 40))
		return
	}
	reply <- msg // buffered, and each waiter is delivered to once
}

// answer replies to a server request (ping). It runs on the stream reader,
// bounded by the stream's life.
func (c *sseConn) answer(req *message) {
	body, err := json.Marshal(answerServerRequest(req, EraLegacy, c.obs))
	if err != nil {
		return
	}
	if err := c.post(c.streamCtx, "", body); err != nil {
		c.obs.warn("answering the server's %s request: %v", sanitize.Truncate(req.Method, 60), err)
	}
}

// endStream records why the stream ended, for the calls waiting on it.
func (c *sseConn) endStream(err error) {
	var f *Failure
	switch {
	case errors.As(err, &f):
	case errors.Is(err, io.EOF):
		f = failf(ReasonClosed, "the server ended the event stream of %s", c.stream)
	case c.streamCtx.Err() != nil:
		f = failf(ReasonClosed, "the event stream of %s was closed", c.stream)
	default:
		errors.As(httpTransportError(c.streamCtx, err, "the event stream of "+c.stream), &f)
	}
	c.mu.Lock()
	c.streamErr = f
	c.mu.Unlock()
}

// streamFailure is the error of a call that found the stream ended.
func (c *sseConn) streamFailure(what string) error {
	c.mu.Lock()
	err := c.streamErr
	c.mu.Unlock()
	var f *Failure
	if errors.As(err, &f) {
		return &Failure{Reason: f.Reason, HTTPStatus: f.HTTPStatus, Err: fmt.Errorf("%s: %w", what, f.Err)}
	}
	return failf(ReasonClosed, "%s: the event stream has ended", what)
}

// sseFallback reports whether a failed streamable HTTP POST means the
// server may speak the legacy HTTP+SSE transport, by the spec's rule: a
// 400, 404 or 405 whose body is not a recognized modern JSON-RPC error
// (-32022, -32021, -32020, or -32601 with 404). Apply it to the POST of
// initialize: a legacy streamable server also answers a session-less
// server/discover with 400, and that means "initialize", not "SSE".
func sseFallback(err error) bool {
	var (
		status int
		rpcErr *RPCError
		f      *Failure
	)
	switch {
	case errors.As(err, &rpcErr):
		if isModernHTTPError(rpcErr) {
			return false
		}
		status = rpcErr.HTTPStatus
	case errors.As(err, &f) && f.Reason == ReasonHTTPStatus:
		status = f.HTTPStatus
	}
	return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusMethodNotAllowed
}

// isModernHTTPError reports a JSON-RPC error only a modern server sends
// over HTTP.
func isModernHTTPError(e *RPCError) bool {
	switch e.Code {
	case -32022, -32021, -32020:
		return true
	case -32601:
		return e.HTTPStatus == http.StatusNotFound
	}
	return false
}

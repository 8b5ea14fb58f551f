package probe

// A listener: one long-lived stream to a remote server on which it
// announces changes of its tool list, so a watcher re-probes at once
// instead of at its next scheduled probe.
//
//   - modern (2026-07-28): POST subscriptions/listen with
//     notifications.toolsListChanged; the answer is an event stream that
//     opens with notifications/subscriptions/acknowledged.
//   - legacy streamable HTTP: initialize, then the session's standalone GET
//     event stream, opened before notifications/initialized so a server
//     that registers tools once initialized (and announces them at once)
//     is heard; then notifications/initialized. A 405 to the GET means the
//     server offers no such stream (ErrNoStream).
//   - legacy HTTP+SSE (2024-11-05): the transport's own GET stream carries
//     every server message; initialize and initialized over it.
//
// Server requests on the stream (ping) are answered as in a probe.

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

// ErrNoStream is Listen's error when the server offers no stream to
// listen on (a legacy server that answers the GET with 405, or a modern one
// that does not know subscriptions/listen): polling is all there is.
var ErrNoStream = errors.New("the server offers no stream to listen on")

// ListenOptions say how to reach a server already probed.
type ListenOptions struct {
	Options
	Era             Era    // the server's era, as its last probe found it
	ProtocolVersion string // the version its last probe negotiated (modern: the one to ask for)
	// Up is called once the stream is open and listening.
	Up func()
}

// Listen holds one listening stream to the remote target t and calls
// changed for each notifications/tools/list_changed the server sends on it,
// until ctx ends (nil) or the stream does (an error saying why; ErrNoStream
// when there is none to hold). changed must not block.
func Listen(ctx context.Context, t Target, opts ListenOptions, changed func()) error {
	if t.URL == "" {
		return failf(ReasonConfig, "only a remote server can be listened to")
	}
	opts.Options = opts.Options.WithDefaults()
	obs := &observer{start: time.Now(), onListChanged: changed}
	up := opts.Up
	if up == nil {
		up = func() {}
	}
	var err error
	switch {
	case opts.Era == EraModern:
		err = listenModern(ctx, t, opts, obs, up)
	case t.Transport == TransportSSE:
		err = listenSSE(ctx, t, opts, obs, up)
	default:
		err = listenStreamable(ctx, t, opts, obs, up)
	}
	if ctx.Err() != nil {
		return nil //nolint:nilerr // the caller ended it: not a failure of the stream
	}
	return err
}

// subscriptionParams are the params of subscriptions/listen.
type subscriptionParams struct {
	Meta          *requestMeta `json:"_meta"`
	Notifications struct {
		ToolsListChanged bool `json:"toolsListChanged"`
	} `json:"notifications"`
}

func listenModern(ctx context.Context, t Target, opts ListenOptions, obs *observer, up func()) error {
	c, err := newHTTPConn(t, opts.Options, obs)
	if err != nil {
		return err
	}
	defer c.close(context.WithoutCancel(ctx))
	version := opts.ProtocolVersion
	if version == "" {
		version = modernVersions[0]
	}
	c.setProtocol(EraModern, version)
	params := subscriptionParams{Meta: &requestMeta{ProtocolVersion: version,
		ClientInfo: implementation{Name: opts.ClientName, Version: opts.ClientVersion}}}
	params.Notifications.ToolsListChanged = true
	id, resp, _, err := c.send(ctx, "subscriptions/listen", params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	what := "subscriptions/listen to " + c.where
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return fmt.Errorf("%s: HTTP %d: %w", what, resp.StatusCode, ErrNoStream)
	}
	mt, err := c.checkResponse(resp, "subscriptions/listen", what)
	if err != nil {
		return err
	}
	if !isEventStream(mt) {
		msg, err := c.readJSON(ctx, resp, id, what)
		if err == nil && msg.Error != nil {
			return fmt.Errorf("%s: %s: %w", what, msg.Error.Error(), ErrNoStream)
		}
		return failf(ReasonProtocol, "%s: answered without an event stream", what)
	}
	return c.listen(ctx, newSSEReader(resp.Body, c.maxBytes), id, what, func(msg *message) {
		if msg.Method == "notifications/subscriptions/acknowledged" {
			up()
		}
	})
}

func listenStreamable(ctx context.Context, t Target, opts ListenOptions, obs *observer, up func()) error {
	c, err := newHTTPConn(t, opts.Options, obs)
	if err != nil {
		return err
	}
	// Ended by the caller (a shutdown, the server removed): no DELETE of
	// the session, which the closed connection ends soon enough on the
	// server's side; a daemon with thousands of listeners must not send
	// thousands of requests on its way out.
	defer c.close(ctx)
	raw, err := c.call(ctx, "initialize", initializeParams{
		ProtocolVersion: LegacyVersions[0],
		ClientInfo:      implementation{Name: opts.ClientName, Version: opts.ClientVersion},
	})
	if err != nil {
		return err
	}
	r, err := readInitialize(raw)
	if err != nil {
		return err
	}
	c.setProtocol(EraLegacy, r.ProtocolVersion)

	what := "GET event stream " + c.where
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint.String(), nil)
	if err != nil {
		return failf(ReasonConfig, "%s: %v", what, err)
	}
	c.setHeaders(req.Header, "", sentParams{})
	req.Header.Del("Content-Type")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		return httpTransportError(ctx, err, what)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return fmt.Errorf("%s: HTTP 405: %w", what, ErrNoStream)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp, "GET event stream")
	}
	if mt := mediaType(resp.Header.Get("Content-Type")); !isEventStream(mt) {
		return failf(ReasonProtocol, "%s: HTTP %d with content type %q, not an event stream", what, resp.StatusCode, sanitize.Truncate(mt, 60))
	}
	// The stream is open: now the server may finish its set-up, and what
	// it announces then arrives on it.
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	up()
	return c.listen(ctx, newSSEReader(resp.Body, c.maxBytes), nil, what, nil)
}

// listen reads a listening stream until it ends: requests are answered,
// notifications go to the observer (and to seen), and the response to the
// request that opened it (id) ends it.
func (c *httpConn) listen(ctx context.Context, events *sseReader, id json.RawMessage, what string, seen func(*message)) error {
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			return failf(ReasonClosed, "%s: the server ended the stream", what)
		}
		if err != nil {
			return httpTransportError(ctx, err, what)
		}
		if (ev.Event != "" && ev.Event != "message") || ev.Data == "" {
			continue
		}
		msg, err := parseMessage([]byte(ev.Data))
		if err != nil {
			return failf(ReasonProtocol, "%s: an event of the stream: %v", what, err)
		}
		switch {
		case msg.isRequest():
			c.answer(ctx, msg)
		case msg.isNotification():
			if seen != nil {
				seen(msg)
			}
			c.obs.notification(msg.Method)
		case id != nil && sameID(msg.ID, id):
			if msg.Error != nil {
				return fmt.Errorf("%s: %s: %w", what, msg.Error.Error(), ErrNoStream)
			}
			return failf(ReasonClosed, "%s: the server ended the subscription", what)
		}
	}
}

func listenSSE(ctx context.Context, t Target, opts ListenOptions, obs *observer, up func()) error {
	c, err := newSSEConn(ctx, t, opts.Options, obs)
	if err != nil {
		return err
	}
	defer c.close(context.WithoutCancel(ctx))
	raw, err := c.call(ctx, "initialize", initializeParams{
		ProtocolVersion: LegacyVersions[0],
		ClientInfo:      implementation{Name: opts.ClientName, Version: opts.ClientVersion},
	})
	if err != nil {
		return err
	}
	if _, err := readInitialize(raw); err != nil {
		return err
	}
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	up()
	select {
	case <-ctx.Done():
		return nil
	case <-c.done:
		return c.streamFailure("listening on the event stream of " + c.stream)
	}
}

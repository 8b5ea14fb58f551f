package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mcpwatch/mcpwatch/probe"
)

// The client's RoundTripper: the token on every request to the server's own origin,
// and what a 401 or 403 challenge sets off (discovery, a new token, one step-up).

// transport is the client's RoundTripper for one probe.
type transport struct {
	c      *Client
	base   http.RoundTripper // the probe's; discovery and token requests go through it too
	origin string

	// mu guards tok: the token this probe got, used for the rest of it
	// even when it is inside the renewal margin (a token that lives less
	// than the margin would otherwise be fetched for every request).
	mu  sync.Mutex
	tok string
}

// RoundTrip sends req with the cached token (or none before discovery). A
// 401 gets one new token (after discovery, the first time) and one retry;
// a 403 insufficient_scope one step-up and one retry, unless the scope was
// already asked for. It never loops.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *req.URL
	if originOf(&u) != t.origin {
		return t.base.RoundTrip(req) // a credential for one origin never goes to another
	}
	ctx, done := t.c.authContext(req.Context())
	defer done()
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return t.once(req) // a body that cannot be sent twice: no retry
		}
		// Every send reads a copy from GetBody; a RoundTripper closes the
		// request's own body, whatever happens.
		defer req.Body.Close()
	}
	t.mu.Lock()
	tok := t.tok
	t.mu.Unlock()
	if tok == "" {
		var err error
		if tok, err = t.c.current(ctx, t.base); err != nil {
			return nil, err
		}
	}
	renewed, steppedUp := false, false
	for {
		resp, err := t.send(req, tok)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			ch := probe.ParseChallenge(resp.Header)
			discard(resp)
			if renewed {
				return nil, t.c.refused(ch)
			}
			renewed = true
			if tok, err = t.c.renew(ctx, t.base, ch, tok); err != nil {
				return nil, err
			}
			continue
		case http.StatusForbidden:
			ch := probe.ParseChallenge(resp.Header)
			if ch == nil || ch.Error != "insufficient_scope" || tok == "" {
				return resp, nil // refused by policy: the probe says so
			}
			discard(resp)
			if steppedUp || t.c.alreadyAsked(ch.Scope) {
				return nil, t.c.insufficient(ch)
			}
			steppedUp = true
			if tok, err = t.c.stepUp(ctx, t.base, ch); err != nil {
				return nil, err
			}
			continue
		}
		t.mu.Lock()
		t.tok = tok
		t.mu.Unlock()
		return resp, nil
	}
}

// authContext is the context of the token requests a request needs: its
// own, but for a sign-in (mcpwatch login), which may last until the
// login's deadline although the request that needed it has a shorter one
// (era detection gives its first request a few seconds; a person takes
// longer). A request canceled outright (Ctrl-C) still cancels the
// sign-in; its own deadline passing does not.
func (c *Client) authContext(ctx context.Context) (context.Context, context.CancelFunc) {
	l := c.cfg.Login
	if l == nil || l.Deadline.IsZero() {
		return ctx, func() {}
	}
	auth, cancel := context.WithDeadline(context.WithoutCancel(ctx), l.Deadline)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return auth, func() { stop(); cancel() }
}

// once sends req with the current token and hands back whatever comes.
func (t *transport) once(req *http.Request) (*http.Response, error) {
	tok, err := t.c.current(req.Context(), t.base)
	if err != nil {
		req.Body.Close()
		return nil, err
	}
	r := req.Clone(req.Context())
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(r)
}

func (t *transport) send(req *http.Request, token string) (*http.Response, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return t.base.RoundTrip(r)
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

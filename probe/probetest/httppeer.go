package probetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// httpPeer writes one HTTP response: a JSON body, or an SSE stream that can
// carry notifications and our own requests ahead of the reply (the peer
// core talks to).
type httpPeer struct {
	s          *Server
	w          http.ResponseWriter
	rc         *http.ResponseController
	ctx        context.Context
	body       io.Writer // w, or a dripWriter over it for SlowBody
	streamable bool      // streamable HTTP: a priming event and event ids; legacy SSE: neither
	streaming  bool
	nextEvent  int
	idPrefix   string // before each event id: a stream that may be resumed has ids of its own
}

func (s *Server) newPeer(w http.ResponseWriter, r *http.Request, streamable bool) *httpPeer {
	p := &httpPeer{s: s, w: w, rc: http.NewResponseController(w), ctx: r.Context(), body: w, streamable: streamable}
	if s.core.cfg.Behavior == SlowBody {
		p.body = &dripWriter{ctx: r.Context(), w: w, flush: p.flush}
	}
	return p
}

func (p *httpPeer) flush() { _ = p.rc.Flush() }

// startStream sends the SSE status and headers, and on streamable HTTP a
// priming event (an id and empty data), as the TypeScript SDK does.
func (p *httpPeer) startStream() error {
	if p.streaming {
		return nil
	}
	p.streaming = true
	h := p.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	p.w.WriteHeader(http.StatusOK)
	p.flush()
	if !p.streamable {
		return nil
	}
	p.nextEvent++
	_, err := io.WriteString(p.body, "id: "+p.idPrefix+strconv.Itoa(p.nextEvent)+"\ndata: \n\n")
	p.flush()
	return err
}

// event writes one SSE event whose data is the reply's message.
func (p *httpPeer) event(name string, rep reply) error {
	return p.writeEvent(name, rep.payload())
}

func (p *httpPeer) writeEvent(name string, data io.Reader) error {
	head := "event: " + name + "\n"
	if p.streamable {
		p.nextEvent++
		head += "id: " + p.idPrefix + strconv.Itoa(p.nextEvent) + "\n"
	}
	_, err := io.Copy(p.body, io.MultiReader(strings.NewReader(head+"data: "), data, strings.NewReader("\n\n")))
	p.flush()
	return err
}

// copy writes the reply as a plain body.
func (p *httpPeer) copy(rep reply) error {
	_, err := io.Copy(p.body, rep.payload())
	p.flush()
	return err
}

// notify implements peer.
func (p *httpPeer) notify(ctx context.Context, method string) error {
	if err := p.startStream(); err != nil {
		return err
	}
	return p.event("message", reply{msg: notificationMessage(method)})
}

// ask implements peer: the request goes out on this stream, and its reply
// comes back in a POST of its own, which deliver routes here.
func (p *httpPeer) ask(ctx context.Context, method string) (*inMessage, error) {
	id, ch := p.s.await(method)
	defer p.s.forget(id)
	if err := p.startStream(); err != nil {
		return nil, err
	}
	if err := p.event("message", reply{msg: requestMessage(id, method)}); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the reply to %s: %w", method, ctx.Err())
	case <-p.s.closed:
		return nil, errClientGone
	}
}

// payload is the bytes of a reply, streamed for HugeLine.
func (r reply) payload() io.Reader {
	if r.huge {
		return hugeLine(r.msg.ID)
	}
	return bytes.NewReader(r.msg.encode())
}

package probe

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// leanTransport makes the HTTP/1.1 exchanges of probes with one origin, over
// plain HTTP or TLS, on the caller's goroutine: it writes the request, reads the
// response and hands the body over, with no reader and writer goroutines
// per connection and no channel between them and the caller. net/http's
// Transport runs two goroutines per connection and passes every request,
// response and end of body between them and the caller: at 10,000 servers
// every 15 s those handoffs, and the wake-ups they cost, were a fifth of
// the daemon's CPU, more than the probes' own reading and writing.
//
// It keeps idle connections for the next probe (at most maxIdle, each for
// idleTimeout) and serves only what it can serve as net/http would: a
// request for its own origin, no proxy. Anything else (a redirect to
// another origin, an upgrade) goes to fallback, the origin's net/http
// transport, whose dial function (the dial guard) and TLS settings it
// uses. Over TLS it offers HTTP/1.1 alone (ALPN): a server that speaks
// HTTP/2 speaks HTTP/1.1 too, and a probe's few requests in a row gain
// nothing from HTTP/2's streams, whose framing, flow control and reader
// goroutine cost net/http's client more CPU than HTTP/1.1 (10,000 HTTPS
// servers every 15 s: 38.5% of a core over HTTP/2, 31.9% over HTTP/1.1).
type leanTransport struct {
	fallback    *http.Transport
	host        string      // the URL host it was made for, as the target spells it
	origin      string      // originOf that URL
	scheme      string      // "http" or "https"
	tls         *tls.Config // https: the fallback's settings, HTTP/1.1 offered alone
	dial        dialFunc
	maxHeader   int64
	maxIdle     int
	idleTimeout time.Duration

	mu    sync.Mutex
	idle  []*leanConn // the most recently used last
	sweep *time.Timer // armed while a connection is idle
}

// newLeanTransport returns the lean transport of target's origin in front
// of fallback, or nil when the origin is not one it can serve: a proxy from
// the environment, or a scheme other than http and https.
func newLeanTransport(target *url.URL, fallback *http.Transport, maxIdle int, idleTimeout time.Duration) *leanTransport {
	if !leanSupported || (target.Scheme != "http" && target.Scheme != "https") {
		return nil
	}
	if fallback.Proxy != nil {
		if proxy, err := fallback.Proxy(&http.Request{Method: http.MethodPost, URL: target, Header: http.Header{}}); err != nil || proxy != nil {
			return nil
		}
	}
	dial := dialFunc(fallback.DialContext)
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var tlsConfig *tls.Config
	if target.Scheme == "https" {
		if fallback.TLSClientConfig != nil {
			tlsConfig = fallback.TLSClientConfig.Clone()
		} else {
			tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName = target.Hostname()
		}
		tlsConfig.NextProtos = []string{"http/1.1"}
	}
	return &leanTransport{
		fallback:    fallback,
		host:        target.Host,
		origin:      originOf(target),
		scheme:      target.Scheme,
		tls:         tlsConfig,
		dial:        dial,
		maxHeader:   fallback.MaxResponseHeaderBytes,
		maxIdle:     maxIdle,
		idleTimeout: idleTimeout,
	}
}

// serves reports whether req is one the lean transport sends itself.
func (t *leanTransport) serves(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != t.scheme || req.Method == http.MethodConnect {
		return false
	}
	if req.URL.Host != t.host && originOf(req.URL) != t.origin {
		return false
	}
	// A protocol switch is net/http's to negotiate; so is a request that
	// sets its own Connection header.
	_, upgrade := req.Header["Upgrade"]
	_, connection := req.Header["Connection"]
	return !upgrade && !connection
}

// leanConn is one kept-alive connection.
type leanConn struct {
	conn   net.Conn // the TLS connection over raw, or raw itself
	raw    net.Conn // the TCP connection, peeked at while idle
	tls    *tls.ConnectionState
	limit  limitReader // what the reader may still take from conn
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time
}

// limitReader reads from a connection while n stays positive: the bound on
// a response's header, which http.ReadResponse itself does not bound.
type limitReader struct {
	r io.Reader
	n int64
}

var errHeaderTooLarge = errors.New("header too large")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Buffers of a connection: net/http's sizes.
const leanBufferSize = 4 << 10

// max1xxResponses bounds the informational responses read before the
// final one, as net/http does.
const max1xxResponses = 5

// aLongTimeAgo is a deadline that has passed: set on a connection, it
// ends the read or write under way.
var aLongTimeAgo = time.Unix(1, 0)

func (t *leanTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.serves(req) {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	c, reused, err := t.get(ctx, req)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.conn, Reused: reused, WasIdle: reused})
	}
	return t.exchange(ctx, c, req, trace)
}

// get takes the most recently used idle connection that is still open, or
// dials a new one; reused says which.
func (t *leanTransport) get(ctx context.Context, req *http.Request) (c *leanConn, reused bool, err error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		c = t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		// A server may have closed the connection while it was idle
		// (its own idle timeout), or sent what no request asked for.
		if idleConnUsable(c.raw) {
			return c, true, nil
		}
		_ = c.conn.Close()
	}
	raw, err := t.dial(ctx, "tcp", canonicalAddr(req.URL))
	if err != nil {
		return nil, false, err
	}
	c = &leanConn{conn: raw, raw: raw}
	if t.tls != nil {
		tc := tls.Client(raw, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, false, err
		}
		state := tc.ConnectionState()
		c.conn, c.tls = tc, &state
	}
	conn := c.conn
	c.limit.r = conn
	c.br = bufio.NewReaderSize(&c.limit, leanBufferSize)
	c.bw = bufio.NewWriterSize(conn, leanBufferSize)
	return c, false, nil
}

// canonicalAddr is the host:port of u, the scheme's port when it names
// none.
func canonicalAddr(u *url.URL) string { return net.JoinHostPort(u.Hostname(), portOf(u)) }

// finish ends an exchange on c whose answer was read to its end: c goes
// back idle when the request's cancellation had not fired (stop reports
// it stopped the watch first), neither side asked to close (keep) and
// nothing more came after the answer; else it is closed.
func (t *leanTransport) finish(c *leanConn, stop func() bool, keep bool, trace *httptrace.ClientTrace) {
	if stop() && keep && c.br.Buffered() == 0 {
		t.put(c, trace)
		return
	}
	_ = c.conn.Close()
}

// put keeps c idle for the next request, or closes it when the origin
// already keeps enough.
func (t *leanTransport) put(c *leanConn, trace *httptrace.ClientTrace) {
	c.idleAt = time.Now()
	t.mu.Lock()
	if len(t.idle) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.conn.Close()
		return
	}
	t.idle = append(t.idle, c)
	if t.sweep == nil {
		t.sweep = time.AfterFunc(t.idleTimeout, t.closeExpired)
	}
	t.mu.Unlock()
	if trace != nil && trace.PutIdleConn != nil {
		trace.PutIdleConn(nil)
	}
}

// closeExpired closes the connections idle for idleTimeout, and comes back
// when the next one will be, while any is idle.
func (t *leanTransport) closeExpired() {
	now := time.Now()
	t.mu.Lock()
	expired := 0
	for expired < len(t.idle) && now.Sub(t.idle[expired].idleAt) >= t.idleTimeout {
		expired++
	}
	closing := make([]*leanConn, expired)
	copy(closing, t.idle[:expired])
	t.idle = append(t.idle[:0], t.idle[expired:]...)
	clear(t.idle[len(t.idle):cap(t.idle)])
	switch {
	case len(t.idle) > 0 && t.sweep != nil:
		t.sweep.Reset(t.idle[0].idleAt.Add(t.idleTimeout).Sub(now))
	case len(t.idle) > 0: // CloseIdleConnections stopped the timer as it fired
		t.sweep = time.AfterFunc(t.idle[0].idleAt.Add(t.idleTimeout).Sub(now), t.closeExpired)
	default:
		t.sweep = nil
	}
	t.mu.Unlock()
	for _, c := range closing {
		_ = c.conn.Close()
	}
}

// CloseIdleConnections closes the idle connections of both transports.
func (t *leanTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	if t.sweep != nil {
		t.sweep.Stop()
		t.sweep = nil
	}
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.conn.Close()
	}
	t.fallback.CloseIdleConnections()
}

// exchange writes req on c and reads the response's header; the body is
// read by the caller, and c goes back idle once it has been read to its
// end.
func (t *leanTransport) exchange(ctx context.Context, c *leanConn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	// Cancelling the request ends the read or write under way on c;
	// after that, c is never used again.
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = c.conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	out, gzipped := withAcceptEncoding(req)
	if err := out.Write(c.bw); err != nil {
		return fail(err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	var resp *http.Response
	for informational := 0; ; informational++ {
		c.limit.n = t.maxHeader
		var err error
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			if c.limit.n <= 0 {
				err = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", t.maxHeader)
			}
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if informational == max1xxResponses {
			return fail(errors.New("net/http: too many 1xx informational responses"))
		}
	}
	c.limit.n = math.MaxInt64
	resp.TLS = c.tls
	keep := !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody || resp.ContentLength == 0 {
		// Nothing to read: c is free now.
		_ = resp.Body.Close()
		resp.Body = http.NoBody
		t.finish(c, stop, keep, trace)
		return resp, nil
	}
	body := &leanBody{t: t, c: c, body: resp.Body, ctx: ctx, stop: stop, keep: keep, trace: trace}
	resp.Body = body
	if gzipped && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Body = &gzipBody{body: body}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	return resp, nil
}

// withAcceptEncoding asks for a gzipped response, as net/http's transport
// does (and undoes, below), when the request says nothing of encodings
// itself; req is never changed.
func withAcceptEncoding(req *http.Request) (*http.Request, bool) {
	if req.Method == http.MethodHead || req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" {
		return req, false
	}
	out := new(http.Request)
	*out = *req
	out.Header = make(http.Header, len(req.Header)+1)
	for k, v := range req.Header {
		out.Header[k] = v
	}
	out.Header["Accept-Encoding"] = acceptGzip
	return out, true
}

var acceptGzip = []string{"gzip"}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// leanBody is a response body on a lean connection: read to its end, it
// puts the connection back idle; closed before, it closes it.
type leanBody struct {
	t     *leanTransport
	c     *leanConn
	body  io.ReadCloser
	ctx   context.Context
	stop  func() bool
	keep  bool
	trace *httptrace.ClientTrace
	done  atomic.Bool
	eof   atomic.Bool // read to its end: further reads are at the end still
}

var errReadOnClosedBody = errors.New("http: read on closed response body")

func (b *leanBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		if b.eof.Load() {
			return 0, io.EOF
		}
		return 0, errReadOnClosedBody
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF: //nolint:errorlint // a Reader's end is io.EOF itself, never wrapped
		b.eof.Store(true)
		if b.done.CompareAndSwap(false, true) {
			b.t.finish(b.c, b.stop, b.keep, b.trace)
		}
	case err != nil:
		if ctxErr := b.ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		b.end()
	}
	return n, err
}

// Close closes the connection unless the body was read to its end; a Read
// under way on another goroutine returns.
func (b *leanBody) Close() error {
	b.end()
	return nil
}

func (b *leanBody) end() {
	if b.done.CompareAndSwap(false, true) {
		b.stop()
		_ = b.c.conn.Close()
	}
}

// gzipBody reads a gzipped body as net/http's transport does for a
// response to a request it asked gzip for.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.err == nil {
			g.zr, g.err = gzip.NewReader(g.body)
		}
		if g.err != nil {
			return 0, g.err
		}
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

package probe

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// maxResponseHeaderBytes bounds what a hostile server can make us hold in
// headers (net/http's own default is 10 MB).
const maxResponseHeaderBytes = 1 << 20

// newHTTPClient builds the client of one probe: the target's TLS settings,
// a bounded redirect policy (opts.MaxRedirects; negative means none) and the
// target's headers, which only ever go to the target's own origin. Its
// transport is the origin's keep-alive one from opts.Conns, or, without a
// pool, one of its own whose connections are closed with the probe.
func newHTTPClient(t Target, opts Options) (*httpClient, error) {
	target, err := url.Parse(t.URL)
	if err != nil {
		// A url.Error repeats the whole URL, user info and query
		// included: where credentials tend to hide.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, failf(ReasonConfig, "the server URL is not a URL: %v", err)
	}
	if target.Scheme != "http" && target.Scheme != "https" {
		return nil, failf(ReasonConfig, "server URL %s: scheme must be http or https", redacted(target))
	}
	for name, value := range t.Headers {
		if !isTokenString(name) || strings.ContainsAny(value, "\r\n\x00") {
			return nil, failf(ReasonConfig, "header %q: not a valid header name, or a value with a line break or NUL", sanitize.Truncate(name, 60))
		}
	}
	tlsConfig, caSum, err := tlsConfigFor(t)
	if err != nil {
		return nil, err
	}
	var (
		transport http.RoundTripper
		conns     *connTracker
	)
	if opts.Conns != nil {
		// A guarded target never takes a connection an unguarded one
		// dialed: that one's address was never checked.
		transport = opts.Conns.transport(target, connKey{origin: originOf(target), ca: caSum, insecure: t.InsecureSkipVerify, publicOnly: t.PublicOnly}, tlsConfig)
	} else {
		own := newTransport(tlsConfig)
		conns = &connTracker{open: map[*trackedConn]struct{}{}}
		own.DialContext = conns.wrap(own.DialContext)
		transport = own
	}
	limit := max(opts.MaxRedirects, 0)
	base := transport
	if t.PublicOnly {
		base = publicOnly(transport, t.PublicOnlyFix)
	}
	var rt http.RoundTripper = &headerTransport{base: base, origin: originOf(target), headers: t.Headers}
	if t.Auth != nil {
		rt = t.Auth.RoundTripper(rt)
	}
	client := &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// Hand the 3xx back (the status mapping reports it as
			// http_status) past the limit, and when net/http would turn
			// a POST into a GET (301, 302, 303): the message would be lost.
			if len(via) > limit || req.Method != via[len(via)-1].Method {
				return http.ErrUseLastResponse
			}
			// net/http keeps Authorization on a redirect to a subdomain;
			// a credential meant for one host never goes to another.
			if originOf(req.URL) != originOf(via[0].URL) {
				req.Header.Del("Authorization")
				req.Header.Del("Cookie")
			}
			return nil
		},
	}
	return &httpClient{Client: client, conns: conns, target: target, redirects: limit}, nil
}

// Tests point a host name at loopback through these: guardNetwork is how
// a PublicOnly target's names resolve (the system's when zero), baseDial
// how every transport dials (net.Dialer's when nil). Set only by tests,
// before the transports they concern are made.
var (
	guardNetwork dialguard.Network
	baseDial     dialFunc
)

// newTransport is net/http's default transport with our bounds.
func newTransport(tlsConfig *tls.Config) *http.Transport {
	base, _ := http.DefaultTransport.(*http.Transport)
	transport := base.Clone()
	transport.TLSClientConfig = tlsConfig
	if baseDial != nil {
		transport.DialContext = baseDial
	}
	// A request that carries a dial policy (a PublicOnly target's, an
	// OAuth client's discovery and token requests) is dialed only within
	// it; the other probes' requests carry none.
	transport.DialContext = dialguard.Dial(transport.DialContext)
	transport.MaxResponseHeaderBytes = maxResponseHeaderBytes
	transport.IdleConnTimeout = 30 * time.Second
	return transport
}

// publicOnly sends every request through base dialed to public addresses
// only, and turns a refused dial into a config failure that says what
// the address was and how to allow it: a policy, not a connection problem,
// and nothing was sent.
func publicOnly(base http.RoundTripper, fix string) http.RoundTripper {
	guarded := dialguard.Transport(base, guardNetwork, func(*http.Request) dialguard.Reach { return dialguard.Public })
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := guarded.RoundTrip(req)
		var refused *dialguard.RefusedError
		if errors.As(err, &refused) {
			msg := fmt.Sprintf("this server may reach only public addresses: %s resolved to %s, and no request was sent",
				sanitize.Truncate(refused.Host, 255), refused.Addr)
			if fix != "" {
				msg += "; " + fix
			}
			return nil, &Failure{Reason: ReasonConfig, Err: errors.New(msg)}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// httpClient is the client of one probe.
type httpClient struct {
	*http.Client
	conns     *connTracker // the probe's own connections; nil on a pooled transport
	target    *url.URL     // the target's URL
	redirects int          // followed at most
}

// shutdown closes every connection of a probe that has a transport of its
// own. CloseIdleConnections alone is not enough: net/http hands a
// connection back to its idle pool from its own goroutine after the body is
// read, which may come after the call, and that connection would then
// linger until the idle timeout. A pooled transport keeps its idle
// connections for the next probe of the origin.
func (c *httpClient) shutdown() {
	if c.conns == nil {
		return
	}
	c.CloseIdleConnections()
	c.conns.closeAll()
}

// Bounds of a ConnPool.
const (
	poolMaxOrigins = 4096 // transports kept; the least recently used goes first
	// poolIdlePerOrigin is the idle keep-alive connections kept per
	// origin: as many as the probes a daemon runs at once by default
	// (defaults.concurrency), since the servers behind one origin (a
	// gateway serving many on paths of one host) are probed that many at
	// once, and a connection closed for want of an idle place is a new
	// TCP (and TLS) connection for the next probe. Only connections that
	// were once all busy at once are ever idle together.
	poolIdlePerOrigin  = 128
	poolIdleTimeout    = 2 * time.Minute // longer than the usual probe interval
	poolEvictBatchSize = poolMaxOrigins / 16
)

// ConnPool keeps HTTP connections alive between the probes of a server:
// one keep-alive transport per origin (and TLS settings), with a few idle
// connections each (an origin's exchanges, over HTTP/1.1 in the clear or
// over TLS, made on the probe's own goroutine by a leanTransport, net/http's
// transport behind it), so a daemon probing a server every 15 s sets up TCP
// and TLS once rather than at every probe. Configured headers are added per
// request, so servers of one origin share connections, never credentials.
// It is safe for concurrent use; Close closes every idle connection.
type ConnPool struct {
	mu     sync.Mutex
	byKey  map[connKey]*pooledTransport
	tick   uint64
	closed bool
}

type connKey struct {
	origin     string
	ca         string // hash of the CA file's contents; "" for the system roots
	insecure   bool
	publicOnly bool // its connections were dialed to public addresses only
}

type pooledTransport struct {
	t        idleCloser // a leanTransport in front of net/http's, or net/http's alone
	lastUsed uint64
}

type idleCloser interface {
	http.RoundTripper
	CloseIdleConnections()
}

// NewConnPool returns an empty pool.
func NewConnPool() *ConnPool {
	return &ConnPool{byKey: map[connKey]*pooledTransport{}}
}

// transport is the origin's transport, made on first use. After Close,
// every call makes a transport of its own that keeps no connection idle.
func (p *ConnPool) transport(target *url.URL, k connKey, tlsConfig *tls.Config) http.RoundTripper {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		t := newTransport(tlsConfig)
		t.DisableKeepAlives = true
		return t
	}
	p.tick++
	if pt, ok := p.byKey[k]; ok {
		pt.lastUsed = p.tick
		return pt.t
	}
	if len(p.byKey) >= poolMaxOrigins {
		p.evict()
	}
	t := newTransport(tlsConfig)
	t.MaxIdleConns = 2 * poolIdlePerOrigin // the origin's, and a redirect's target
	t.MaxIdleConnsPerHost = poolIdlePerOrigin
	t.IdleConnTimeout = poolIdleTimeout
	var rt idleCloser = t
	if lean := newLeanTransport(target, t, poolIdlePerOrigin, poolIdleTimeout); lean != nil {
		rt = lean
	}
	p.byKey[k] = &pooledTransport{t: rt, lastUsed: p.tick}
	return rt
}

// evict drops the least recently used transports, closing their idle
// connections; probes still using one finish on it. Called with p.mu held.
// One pass finds the batch's last use (every transport's is a tick of its
// own) and one drops those used no later: it scanned every origin for each
// of the batch (a million comparisons a batch, 6.5% of the CPU of a daemon
// probing 100,000 servers on more origins than the pool keeps).
func (p *ConnPool) evict() {
	n := min(poolEvictBatchSize, len(p.byKey))
	if n == 0 {
		return
	}
	cut := nthLastUse(p.byKey, n)
	for k, pt := range p.byKey {
		if pt.lastUsed <= cut {
			pt.t.CloseIdleConnections()
			delete(p.byKey, k)
		}
	}
}

// Close closes every idle connection of the pool; call it once the probes
// using it have ended (a connection still in use would go idle after it,
// until the idle timeout). Probes started after Close keep no connection.
func (p *ConnPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for k, pt := range p.byKey {
		pt.t.CloseIdleConnections()
		delete(p.byKey, k)
	}
}

// connTracker remembers the open connections of one transport.
type connTracker struct {
	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	closed bool
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (t *connTracker) wrap(dial dialFunc) dialFunc {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: conn, tracker: t}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			_ = conn.Close()
			return nil, net.ErrClosed
		}
		t.open[tc] = struct{}{}
		return tc, nil
	}
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	t.closed = true
	open := t.open
	t.open = map[*trackedConn]struct{}{}
	t.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	tracker *connTracker
}

func (c *trackedConn) Close() error {
	c.tracker.mu.Lock()
	delete(c.tracker.open, c)
	c.tracker.mu.Unlock()
	return c.Conn.Close()
}

// ValidHeaderName reports whether name is an HTTP header name (a token
// of RFC 9110): the one rule, which config's validation applies at load
// and the probe before every request.
func ValidHeaderName(name string) bool { return isTokenString(name) }

func isTokenString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// tlsConfigFor builds the TLS settings of a target: a CA replaces the
// system roots (a private CA is the reason to name one), and skipping
// verification is an explicit choice. caSum identifies the CA's contents,
// so a rotated CA gets a fresh pooled transport.
func tlsConfigFor(t Target) (cfg *tls.Config, caSum string, err error) {
	cfg = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // opt-in per target
	if len(t.CA) == 0 {
		if t.CAFile != "" {
			// A caller that named a CA file and did not read it: the system
			// roots in its place would trust what the operator meant not to.
			return nil, "", failf(ReasonConfig, "CA file %s was not read", t.CAFile)
		}
		return cfg, "", nil
	}
	pool, err := CertPool(t.CA)
	if err != nil {
		return nil, "", failf(ReasonConfig, "CA file %s %w", t.CAFile, err)
	}
	cfg.RootCAs = pool
	sum := sha256.Sum256(t.CA)
	return cfg, string(sum[:]), nil
}

// errNoPEM is CertPool's error.
var errNoPEM = errors.New("holds no PEM certificate")

// CertPool is the pool of the PEM certificates in pem, or an error saying
// it holds none: the one test of a CA file, which config check applies
// too, so that a file a probe would refuse fails the check.
func CertPool(pem []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errNoPEM
	}
	return pool, nil
}

// headerTransport adds the target's configured headers (credentials, as a
// rule) to requests for the target's origin, and to no other.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) == 0 || originOf(req.URL) != h.origin {
		return h.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for name, value := range h.headers {
		key := http.CanonicalHeaderKey(name)
		if key == "Host" {
			req.Host = value
			continue
		}
		// The protocol's own headers (Content-Type, Accept, MCP-*) win
		// over configured ones: a probe that speaks wrong proves nothing.
		if _, set := req.Header[key]; !set {
			req.Header.Set(key, value)
		}
	}
	return h.base.RoundTrip(req)
}

// originOf is scheme://host:port with the default port made explicit, so
// http://h and http://h:80 compare equal.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + portOf(u)
}

// portOf is u's port, or its scheme's when it names none.
func portOf(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// redacted shows a URL as errors name it: as the configuration prints it
// (secret.RedactURL), so userinfo, query values, the fragment and a key in
// the path never reach a message.
func redacted(u *url.URL) string {
	return secret.RedactURL(u.String(), nil)
}

// describeTLS names a certificate or handshake problem in one line.
func describeTLS(err error) string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return "certificate signed by an unknown authority (set the CA file, or insecure for a test server)"
	case errors.As(err, &hostname):
		return fmt.Sprintf("certificate is not valid for host %s", hostname.Host)
	case errors.As(err, &invalid):
		return "certificate is invalid: " + invalid.Error()
	}
	return "TLS handshake failed: " + err.Error()
}

package peertest

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpwatch/mcpwatch/internal/testtool/testca"
)

// Proxy is an HTTPS proxy on loopback for servers that are not Node
// programs (slack-mcp-server is a Go binary): it answers CONNECT to the
// host of a stood-in origin, ends TLS there with a certificate of its own
// test CA, and passes what comes through to the stand-in (a subdomain of
// the origin's host goes there too). A CONNECT to any other host is
// refused (502), so such a server never reaches the network.
// The server must trust the CA (CAFile) and use the proxy (URL): Go
// programs take HTTPS_PROXY and SSL_CERT_FILE, and many take settings of
// their own for both.
type Proxy struct {
	ln     net.Listener
	apis   map[string]*API // host:443 -> stand-in
	caDir  string
	caFile string
	ca     *testca.CA

	mu     sync.Mutex
	certs  map[string]*tls.Certificate
	open   map[net.Conn]bool // the clients' connections being served
	closed bool
	conns  sync.WaitGroup
}

// NewProxy starts a proxy to apis, each of an https origin.
func NewProxy(apis ...*API) (*Proxy, error) {
	p := &Proxy{apis: map[string]*API{}, certs: map[string]*tls.Certificate{}, open: map[net.Conn]bool{}}
	for _, a := range apis {
		u, err := url.Parse(a.Origin)
		if err != nil || u.Scheme != "https" {
			return nil, fmt.Errorf("peertest: the proxy serves https origins, not %q", a.Origin)
		}
		host := u.Host
		if u.Port() == "" {
			host += ":443"
		}
		p.apis[host] = a
	}
	var err error
	if p.ca, err = testca.New("mcpwatch peertest CA"); err != nil {
		return nil, err
	}
	if p.caDir, err = os.MkdirTemp("", "mcpwatch-peertest-ca-"); err != nil {
		return nil, err
	}
	p.caFile = filepath.Join(p.caDir, "ca.pem")
	if err := os.WriteFile(p.caFile, p.ca.PEM(), 0o600); err != nil {
		_ = os.RemoveAll(p.caDir)
		return nil, err
	}
	if p.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		_ = os.RemoveAll(p.caDir)
		return nil, err
	}
	go p.serve()
	return p, nil
}

// URL is the proxy's address, as HTTPS_PROXY takes it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// CAFile is the PEM file of the CA that signs what the proxy presents.
func (p *Proxy) CAFile() string { return p.caFile }

// Close stops the proxy, ends the tunnels it serves (a client that keeps
// its connections alive, as mcpwatch does, would otherwise hold it open),
// and removes its CA file.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.conns.Wait()
	_ = os.RemoveAll(p.caDir)
}

func (p *Proxy) serve() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = conn.Close()
			return
		}
		p.open[conn] = true
		p.conns.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.conns.Done()
			defer func() {
				_ = conn.Close()
				p.mu.Lock()
				delete(p.open, conn)
				p.mu.Unlock()
			}()
			p.handle(conn)
		}()
	}
}

// handle serves one client connection: a CONNECT, then TLS to the stand-in.
func (p *Proxy) handle(conn net.Conn) {
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	a, ok := p.api(req.Host)
	if req.Method != http.MethodConnect || !ok {
		_, _ = io.WriteString(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	tlsConn := tls.Server(&bufferedConn{Conn: conn, r: br}, &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) { return p.leaf(req.Host) },
	})
	if err := tlsConn.Handshake(); err != nil {
		return
	}
	upstream, err := net.Dial("tcp", strings.TrimPrefix(a.reachAt(), "http://"))
	if err != nil {
		return
	}
	defer func() { _ = upstream.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(upstream, tlsConn)
		if c, ok := upstream.(*net.TCPConn); ok {
			_ = c.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(tlsConn, upstream)
	_ = tlsConn.Close()
	<-done
}

// api is the stand-in for host:port: that of its origin, or of the origin's
// subdomains (Slack's answers name a workspace's own host,
// https://acme.slack.com/, and its clients then call that).
func (p *Proxy) api(hostport string) (*API, bool) {
	if a, ok := p.apis[hostport]; ok {
		return a, true
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, false
	}
	for origin, a := range p.apis {
		oh, op, _ := net.SplitHostPort(origin)
		if port == op && strings.HasSuffix(host, "."+oh) {
			return a, true
		}
	}
	return nil, false
}

// leaf is the certificate the proxy presents for host (host:port), signed
// by its CA, made once per host.
func (p *Proxy) leaf(hostport string) (*tls.Certificate, error) {
	host, _, _ := net.SplitHostPort(hostport)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.certs[host]; ok {
		return c, nil
	}
	c, err := p.ca.Leaf(host)
	if err != nil {
		return nil, err
	}
	p.certs[host] = c
	return c, nil
}

// bufferedConn reads first what the CONNECT's reader already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

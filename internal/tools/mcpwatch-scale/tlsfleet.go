package main

// The HTTPS fleet (-tls, -tls -h2): the simulated servers behind TLS with a
// certificate of a test CA made for the run, which mcpwatch and the floor
// client trust as they would a public one: through SSL_CERT_FILE, which
// Go's system roots read on Linux, so no server's configuration names a CA
// (a remote fleet's servers name none). The fleet counts the handshakes it
// completes, and how many resumed a session.

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/mcpwatch/mcpwatch/internal/testtool/testca"
)

// tlsFleet is the TLS side of a fleet: the server's settings and the
// handshakes counted.
type tlsFleet struct {
	caFile     string // PEM of the test CA, for SSL_CERT_FILE
	h2         bool   // offer HTTP/2 (ALPN h2) as well as HTTP/1.1
	config     *tls.Config
	handshakes atomic.Int64
	resumed    atomic.Int64
}

// newTLSFleet makes a test CA and a certificate for 127.0.0.1 signed by it,
// and writes the CA to dir/fleet-ca.pem.
func newTLSFleet(dir string, h2 bool) (*tlsFleet, error) {
	ca, err := testca.New("mcpwatch-scale test CA")
	if err != nil {
		return nil, err
	}
	leaf, err := ca.Leaf("127.0.0.1", "localhost")
	if err != nil {
		return nil, err
	}
	// The chain as a public server sends it: its certificate, then the CA's.
	leaf.Certificate = append(leaf.Certificate, ca.DER())
	f := &tlsFleet{caFile: filepath.Join(dir, "fleet-ca.pem"), h2: h2}
	if err := os.WriteFile(f.caFile, ca.PEM(), 0o600); err != nil {
		return nil, fmt.Errorf("write the test CA: %w", err)
	}
	protos := []string{"http/1.1"}
	if h2 {
		protos = []string{"h2", "http/1.1"}
	}
	f.config = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   protos,
		// Called once a handshake completes, full or resumed.
		VerifyConnection: func(cs tls.ConnectionState) error {
			f.handshakes.Add(1)
			if cs.DidResume {
				f.resumed.Add(1)
			}
			return nil
		},
	}
	return f, nil
}

// serve makes srv serve TLS on l: HTTP/2 too when the fleet offers it, or
// HTTP/1.1 alone (a non-nil, empty TLSNextProto turns net/http's HTTP/2
// off).
func (f *tlsFleet) serve(srv *http.Server, l net.Listener) error {
	srv.TLSConfig = f.config.Clone()
	if !f.h2 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	return srv.ServeTLS(l, "", "")
}

// counts returns the handshakes completed so far and how many resumed.
func (f *tlsFleet) counts() (handshakes, resumed int64) {
	return f.handshakes.Load(), f.resumed.Load()
}

package main

// The HTTPS fleet (-tls, -tls -h2): the simulated servers behind TLS with a
// certificate of a test CA made for the run, which mcpwatch and the floor
// client trust as they would a public one: through SSL_CERT_FILE, which
// Go's system roots read on Linux, so no server's configuration names a CA
// (a remote fleet's servers name none). The fleet counts the handshakes it
// completes, and how many resumed a session.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
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
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpwatch-scale test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make the test CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make the fleet's certificate: %w", err)
	}
	f := &tlsFleet{caFile: filepath.Join(dir, "fleet-ca.pem"), h2: h2}
	if err := os.WriteFile(f.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		return nil, fmt.Errorf("write the test CA: %w", err)
	}
	protos := []string{"http/1.1"}
	if h2 {
		protos = []string{"h2", "http/1.1"}
	}
	f.config = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}},
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

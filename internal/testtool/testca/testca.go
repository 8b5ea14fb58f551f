// Package testca makes a certificate authority for one test or one harness
// run, and the server certificates it signs: what a stand-in of an HTTPS
// service presents, trusted by a client told of the CA (SSL_CERT_FILE, a
// pool), as a public CA is trusted through the system's roots. Keys are
// ECDSA P-256 and every certificate lives two days: long enough for any
// run, short enough that a stray file of one trusts nothing for long.
package testca

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
	"time"
)

// lifetime is how long a certificate of this package is valid, from an
// hour before it was made (a clock a little behind still takes it).
const lifetime = 48 * time.Hour

// CA is a certificate authority made for a run.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// New makes a CA named name.
func New(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(lifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testca: make the CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key}, nil
}

// DER is the CA's certificate.
func (ca *CA) DER() []byte { return ca.cert.Raw }

// PEM is the CA's certificate as a PEM file holds it (SSL_CERT_FILE).
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// Leaf makes a server certificate for hosts (names or IP addresses; the
// first is its common name), signed by the CA.
func (ca *CA) Leaf(hosts ...string) (*tls.Certificate, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("testca: a server certificate names at least one host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(lifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("testca: sign a certificate for %s: %w", hosts[0], err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

package testca

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A client that trusts the CA's PEM alone reaches a server presenting a
// leaf for 127.0.0.1, and one that trusts another CA is refused.
func TestLeafTrustedThroughTheCA(t *testing.T) {
	t.Parallel()
	ca, err := New("testca test")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	get := func(roots *x509.CertPool) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
		resp, err := c.Get(srv.URL)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	trusted := x509.NewCertPool()
	if !trusted.AppendCertsFromPEM(ca.PEM()) {
		t.Fatal("the CA's PEM holds no certificate")
	}
	if err := get(trusted); err != nil {
		t.Fatalf("a client trusting the CA: %v", err)
	}
	other, err := New("another")
	if err != nil {
		t.Fatal(err)
	}
	untrusted := x509.NewCertPool()
	untrusted.AppendCertsFromPEM(other.PEM())
	if err := get(untrusted); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client trusting another CA: %v, want a certificate error", err)
	}
	cert, err := x509.ParseCertificate(leaf.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "127.0.0.1" || len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) || len(cert.DNSNames) != 1 || cert.DNSNames[0] != "localhost" {
		t.Errorf("leaf names %s, IPs %v, DNS %v; want 127.0.0.1 as an address and localhost as a name", cert.Subject.CommonName, cert.IPAddresses, cert.DNSNames)
	}
	if _, err := ca.Leaf(); err == nil {
		t.Error("a leaf for no host was made")
	}
}

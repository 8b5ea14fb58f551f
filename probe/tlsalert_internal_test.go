package probe

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A server that refuses the handshake with an alert (here: it takes no
// TLS version the client offers) fails the probe as tls, not connection:
// the alert reaches the client as a net.OpError "remote error" around a
// type crypto/tls does not export.
func TestTLSAlertIsATLSError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	c := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}) //nolint:gosec // the test's point is an old version
	err = c.Handshake()
	if err == nil {
		t.Fatal("a TLS 1.2 client completed a handshake with a TLS 1.3-only server")
	}
	if !isTLSError(err) {
		t.Errorf("isTLSError(%v) = false, want true", err)
	}
}

package runner

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool/testca"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A canary call whose connection fails on TLS fails with reason tls, as
// the probe would have: the server answers each request on a connection of
// its own, and once it has listed its tools presents a certificate the
// configuration's CA did not issue, so the call's handshake fails.
func TestProbeCallFailsOnTLS(t *testing.T) {
	srv := probetest.NewServer(probetest.Config{})
	var listed atomic.Bool
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			listed.Store(true) // this connection's handshake is done: the next one is refused
		}
		srv.ServeHTTP(w, r)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	ts.Config.SetKeepAlivesEnabled(false)
	// A certificate for 127.0.0.1 of a CA the client does not trust.
	stranger, err := testca.New("a CA nobody trusts")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := stranger.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ts.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if listed.Load() {
			return &tls.Config{Certificates: []tls.Certificate{*leaf}}, nil
		}
		return nil, nil
	}}
	ts.StartTLS()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	s := callServer(ts.URL, mustContracts(t, `{"tools":{"list_report_dates":{}}}`))
	s.CAFile = ca
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, Calls: true})
	if !obs.Result.OK || len(obs.Calls) != 1 {
		t.Fatalf("probe %v (%s), %d calls: the list should succeed", obs.Result.OK, obs.Result.Error, len(obs.Calls))
	}
	if o := obs.Calls[0]; o.Passed || o.Reason != probe.ReasonTLS {
		t.Errorf("call passed=%v reason %q (%s), want a failure %q", o.Passed, o.Reason, o.Message, probe.ReasonTLS)
	}
}

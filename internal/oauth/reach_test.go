package oauth_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The tests below play a public MCP server and its authorization server on
// 127.0.0.2, which their network counts as public; anything on 127.0.0.1
// stays local. No test sends traffic to any address but loopback.
var publicAddr = netip.MustParseAddr("127.0.0.2")

func network(names map[string]string) dialguard.Network {
	return dialguard.Network{
		IsPublic: func(a netip.Addr) bool { return a == publicAddr || dialguard.IsPublic(a) },
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, &net.DNSError{Err: "no such host (test)", Name: host, IsNotFound: true}
		},
	}
}

// publicTLS serves h over https on 127.0.0.2 (the test certificate's name
// is 127.0.0.1, so clients skip verification).
func publicTLS(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", publicAddr.String()+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", publicAddr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// sink is a local service that must never be reached: it counts requests.
type sink struct {
	hits atomic.Int32
	srv  *httptest.Server
}

func newSink(t *testing.T, tlsOn bool) *sink {
	s := &sink{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"stolen","token_type":"Bearer"}`))
	})
	if tlsOn {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(s.srv.Close)
	return s
}

func runInsecure(t *testing.T, c *oauth.Client, url string) *probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP, Auth: c, InsecureSkipVerify: true}, probe.Options{})
}

// A public server whose authorization server is public too works as ever,
// over https.
func TestPublicServerWithPublicAuthorizationServer(t *testing.T) {
	as := probetest.NewAuthServer(probetest.AuthConfig{ClientID: clientID, ClientSecret: clientSecret})
	asSrv := publicTLS(t, as)
	as.SetURL(asSrv.URL)
	kit := probetest.NewServer(probetest.Config{})
	t.Cleanup(kit.Close)
	mcp := publicTLS(t, as.Protect(kit))
	c := newClient(t, oauth.Config{ServerURL: mcp.URL + "/mcp"})
	oauth.SetNetwork(c, network(nil))
	if res := runInsecure(t, c, mcp.URL+"/mcp"); !res.OK {
		t.Fatalf("probe failed: %s: %s", res.Reason, res.Error)
	}
}

// A public server's metadata cannot aim the client at a local address:
// not by a plain http URL, not by an https URL on a loopback or link-local
// address, not by a name that resolves to one. Each is refused before any
// connection (the sink is never reached), the failure names what was
// refused, and no client secret leaves.
func TestPublicServerCannotAimAuthorizationAtLocalAddresses(t *testing.T) {
	plain := newSink(t, false)
	secured := newSink(t, true)
	_, securedPort, _ := net.SplitHostPort(strings.TrimPrefix(secured.srv.URL, "https://"))
	names := map[string]string{"token.evil.test": "127.0.0.1", "metadata.evil.test": "169.254.169.254", "as.example.test": publicAddr.String()}

	for _, tc := range []struct {
		name string
		// what the public server publishes; "" keeps its own
		resourceMetadata, authorizationServer, tokenEndpoint string
		want                                                 string
	}{
		{name: "token endpoint over plain http on loopback", tokenEndpoint: plain.srv.URL + "/token", want: "no https token_endpoint"},
		{name: "token endpoint over https on loopback", tokenEndpoint: secured.srv.URL + "/token", want: "refused to connect to 127.0.0.1"},
		{name: "token endpoint named, resolving to loopback", tokenEndpoint: "https://token.evil.test:" + securedPort + "/token", want: "refused to connect to token.evil.test: it resolves to 127.0.0.1"},
		{name: "resource metadata over plain http", resourceMetadata: plain.srv.URL + "/.well-known/oauth-protected-resource", want: "not an https URL"},
		{name: "resource metadata at the cloud metadata address", resourceMetadata: "https://metadata.evil.test/latest/meta-data", want: "resolves to 169.254.169.254"},
		{name: "authorization server on loopback", authorizationServer: secured.srv.URL, want: "refused to connect to 127.0.0.1"},
		{name: "authorization server over plain http", authorizationServer: plain.srv.URL, want: "not an https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var self string
			mcp := publicTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
					as := self
					if tc.authorizationServer != "" {
						as = tc.authorizationServer
					}
					writeDoc(w, `{"resource":"`+self+`/mcp","authorization_servers":["`+as+`"]}`)
				case r.URL.Path == "/.well-known/oauth-authorization-server":
					token := self + "/token"
					if tc.tokenEndpoint != "" {
						token = tc.tokenEndpoint
					}
					writeDoc(w, `{"issuer":"`+self+`","token_endpoint":"`+token+`","code_challenge_methods_supported":["S256"]}`)
				default:
					rm := self + "/.well-known/oauth-protected-resource/mcp"
					if tc.resourceMetadata != "" {
						rm = tc.resourceMetadata
					}
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rm+`"`)
					http.Error(w, "Unauthorized", http.StatusUnauthorized)
				}
			}))
			self = mcp.URL
			c := newClient(t, oauth.Config{ServerURL: mcp.URL + "/mcp"})
			oauth.SetNetwork(c, network(names))
			res := runInsecure(t, c, mcp.URL+"/mcp")
			if res.OK || !strings.Contains(res.Error, tc.want) {
				t.Errorf("probe: %s: %s; want a refusal naming %q", res.Reason, res.Error, tc.want)
			}
			if strings.Contains(res.Error, clientSecret) {
				t.Errorf("the secret is in the error")
			}
			if plain.hits.Load() != 0 || secured.hits.Load() != 0 {
				t.Errorf("a local service was reached: %d plain, %d https requests", plain.hits.Load(), secured.hits.Load())
			}
		})
	}
}

// A server that is itself local (plain http on loopback) may have its
// authorization server on loopback, as in a development set-up.
func TestLocalServerMayUseLocalAuthorization(t *testing.T) {
	as, url := setup(t, probetest.AuthConfig{}, probetest.Config{}, false)
	c := newClient(t, oauth.Config{ServerURL: url})
	oauth.SetNetwork(c, network(nil))
	if res := run(t, c, url, ""); !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	if len(as.Requests()) != 1 {
		t.Errorf("token requests = %d", len(as.Requests()))
	}
}

func writeDoc(w http.ResponseWriter, doc string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(doc))
}

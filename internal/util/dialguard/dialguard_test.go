package dialguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestIsPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "127.8.9.10": false, "::1": false,
		"10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "fd00::1": false,
		"169.254.169.254": false, "fe80::1": false, "100.64.0.1": false, "0.0.0.0": false, "::": false,
		"224.0.0.1": false, "255.255.255.255": false, "::ffff:127.0.0.1": false, "2002:7f00:1::1": false,
		"93.184.216.34": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "198.51.100.7": true,
	} {
		if got := IsPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", addr, got, want)
		}
	}
}

// dials records what a guarded dial handed on; it dials nothing but
// loopback.
type dials struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dials) next(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	host, _, _ := net.SplitHostPort(addr)
	if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
		return nil, errors.New("test: not dialed (not loopback)")
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func (d *dials) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// names resolves test names; anything else is unknown.
func names(m map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range m[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

func client(d *dials, n Network, reach Reach) *http.Client {
	tr := &http.Transport{DialContext: Dial(d.next), Proxy: nil}
	return &http.Client{Transport: Transport(tr, n, func(*http.Request) Reach { return reach })}
}

// A request limited to public addresses is never dialed to a local one,
// whether the URL names it or a name resolves to it; the dial is refused
// before any connection is attempted.
func TestPublicReachRefusesLocalAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "reached") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	n := Network{Resolve: names(map[string][]string{
		"token.evil.test":    {"127.0.0.1"},
		"metadata.evil.test": {"169.254.169.254"},
		"intranet.evil.test": {"10.0.0.7"},
		"six.evil.test":      {"::1"},
	})}
	for _, host := range []string{"127.0.0.1", "token.evil.test", "metadata.evil.test", "intranet.evil.test", "six.evil.test", "[::1]"} {
		t.Run(host, func(t *testing.T) {
			d := &dials{}
			resp, err := client(d, n, Public).Get("http://" + net.JoinHostPort(strings.Trim(host, "[]"), port) + "/token")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s: HTTP %d, want a refusal", host, resp.StatusCode)
			}
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "public addresses only") {
				t.Errorf("GET %s: %v, want a RefusedError", host, err)
			}
			if got := d.list(); len(got) != 0 {
				t.Errorf("dialed %v, want nothing", got)
			}
		})
	}

	// The same requests with local reach are dialed, to the address the
	// name resolved to (not the name, which could resolve differently).
	d := &dials{}
	n.Resolve = names(map[string][]string{"token.evil.test": {"127.0.0.1"}})
	resp, err := client(d, n, Anywhere).Get("http://token.evil.test:" + port + "/token")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "reached" || len(d.list()) != 1 || d.list()[0] != "127.0.0.1:"+port {
		t.Errorf("body %q, dials %v; want one dial to 127.0.0.1:%s", body, d.list(), port)
	}
}

// A name with a local and a public address is dialed to the public one
// only; local reach is dialed only to the local one.
func TestMixedAddressesKeepOnlyTheReachable(t *testing.T) {
	n := Network{Resolve: names(map[string][]string{"mixed.test": {"10.9.9.9", "198.51.100.7"}})}
	for _, tc := range []struct {
		reach Reach
		want  string
	}{{Public, "198.51.100.7:443"}, {Local, "10.9.9.9:443"}} {
		d := &dials{}
		ctx := context.WithValue(t.Context(), policyKey{}, &policy{net: n, reach: tc.reach, host: "mixed.test"})
		_, _ = Dial(d.next)(ctx, "tcp", "mixed.test:443")
		if got := d.list(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: dialed %v, want only %s", tc.reach, got, tc.want)
		}
	}
}

// Behind a proxy the dial goes to the proxy, so the request's own host is
// looked up and checked instead, and the proxy dialed as it is.
func TestProxiedRequestChecksItsOwnHost(t *testing.T) {
	n := Network{Resolve: names(map[string][]string{"proxy.corp.test": {"10.0.0.3"}, "as.example.test": {"198.51.100.7"}, "token.evil.test": {"127.0.0.1"}})}
	d := &dials{}
	ctx := context.WithValue(t.Context(), policyKey{}, &policy{net: n, reach: Public, host: "token.evil.test"})
	if _, err := Dial(d.next)(ctx, "tcp", "proxy.corp.test:3128"); err == nil || len(d.list()) != 0 {
		t.Errorf("a proxied request to a loopback host: %v, dials %v; want refused, none", err, d.list())
	}
	ctx = context.WithValue(t.Context(), policyKey{}, &policy{net: n, reach: Public, host: "as.example.test"})
	_, _ = Dial(d.next)(ctx, "tcp", "proxy.corp.test:3128")
	if got := d.list(); len(got) != 1 || got[0] != "proxy.corp.test:3128" {
		t.Errorf("a proxied request to a public host dialed %v, want the proxy as given", got)
	}
}

// Requests without a policy (the MCP requests) are dialed as before; a
// request its policy refuses outright is not sent.
func TestNoPolicyAndNoReach(t *testing.T) {
	d := &dials{}
	if _, err := Dial(d.next)(t.Context(), "tcp", "127.0.0.1:1"); err == nil && len(d.list()) != 1 {
		t.Errorf("dials = %v", d.list())
	}
	if got := d.list(); len(got) != 1 || got[0] != "127.0.0.1:1" {
		t.Errorf("an unguarded dial went to %v", got)
	}
	sent := false
	rt := Transport(roundTripper(func(*http.Request) (*http.Response, error) { sent = true; return nil, errors.New("sent") }), Network{}, func(*http.Request) Reach { return 0 })
	_, err := rt.RoundTrip(&http.Request{URL: &url.URL{Scheme: "http", Host: "x.test"}, Header: http.Header{}})
	var re *RefusedError
	if sent || !errors.As(err, &re) {
		t.Errorf("a request with no reach: sent=%v, %v", sent, err)
	}
}

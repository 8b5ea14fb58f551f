// Package dialguard decides, when a connection is dialed, whether a request
// may reach the address its host name resolved to. The OAuth client uses it
// so that what a remote server publishes (its metadata, its authorization
// server's) cannot aim the client's credentials at a loopback, private or
// link-local address: the rule is checked on the address actually dialed,
// so a public-looking name that resolves to 127.0.0.1 is refused as surely
// as http://127.0.0.1 itself. The probe uses it likewise for the MCP
// requests of a server a registry listed (probe.Target.PublicOnly), whose
// URL and headers the registry chose.
//
// Requests that carry no policy (the MCP requests of a server the user
// configured) are dialed as they always were. It does not decide which
// URLs are acceptable (the OAuth client and the registry import check
// schemes); it only keeps a dial inside its Reach.
package dialguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Reach is the set of addresses a request may be dialed to.
type Reach uint8

const (
	// Public addresses: neither Local nor unroutable.
	Public Reach = 1 << iota
	// Local addresses: loopback, private (RFC 1918, fc00::/7), link-local,
	// carrier-grade NAT, unspecified, multicast and the like.
	Local
	// Anywhere is both.
	Anywhere = Public | Local
)

func (r Reach) String() string {
	switch r {
	case Public:
		return "public addresses only"
	case Local:
		return "loopback, private and link-local addresses only"
	case Anywhere:
		return "any address"
	}
	return "no address"
}

// Network is how names are looked up and which addresses count as public:
// the system's when its fields are nil. It is the seam tests use to make a
// name resolve to a loopback address, or a loopback address count as
// public, without sending traffic anywhere but loopback.
type Network struct {
	Resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	IsPublic func(netip.Addr) bool
}

func (n Network) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if n.Resolve != nil {
		return n.Resolve(ctx, host)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, err
}

// Classify says whether addr is public or local.
func (n Network) Classify(addr netip.Addr) Reach {
	public := IsPublic
	if n.IsPublic != nil {
		public = n.IsPublic
	}
	if public(addr.Unmap()) {
		return Public
	}
	return Local
}

// HostReach looks host up and says which kinds of address it has: Local
// when any of its addresses is local (a name that is partly local is
// local), else Public.
func (n Network) HostReach(ctx context.Context, host string) (Reach, error) {
	addrs, err := n.resolve(ctx, host)
	if err != nil {
		return 0, err
	}
	if len(addrs) == 0 {
		return 0, fmt.Errorf("%s has no address", host)
	}
	for _, a := range addrs {
		if n.Classify(a) == Local {
			return Local, nil
		}
	}
	return Public, nil
}

// IsPublic reports whether an address is one a server on the Internet may
// have: not loopback, private (RFC 1918, fc00::/7), link-local (the cloud
// metadata address 169.254.169.254 among them), unspecified, multicast,
// nor one of the special ranges below that route nowhere public or can
// embed any IPv4 address.
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001::/32"),      // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("2002::/16"),      // 6to4: likewise
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
}

// RefusedError is a dial the policy refused: no connection was attempted.
type RefusedError struct {
	Host  string
	Addr  netip.Addr
	Reach Reach
}

func (e *RefusedError) Error() string {
	if !e.Addr.IsValid() {
		return fmt.Sprintf("refused to connect to %s: this request may reach no address", e.Host)
	}
	return fmt.Sprintf("refused to connect to %s: it resolves to %s, and this request may reach %s", e.Host, e.Addr, e.Reach)
}

// policy is what a request's context carries.
type policy struct {
	net   Network
	reach Reach
	host  string // the request's host: a dial to another one is to a proxy
}

type policyKey struct{}

// Transport sends each request through base with reach(req) as its policy:
// every connection dialed for it (by a transport whose DialContext is
// wrapped by Dial) must lead to an address within that reach. A request
// reach refuses outright (0) fails without a dial.
func Transport(base http.RoundTripper, n Network, reach func(*http.Request) Reach) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		r := reach(req)
		if r == 0 {
			return nil, &RefusedError{Host: req.URL.Hostname()}
		}
		ctx := context.WithValue(req.Context(), policyKey{}, &policy{net: n, reach: r, host: req.URL.Hostname()})
		return base.RoundTrip(req.WithContext(ctx))
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// dialFunc is the shape of http.Transport's DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial wraps a transport's dial function: a dial for a request with a
// policy resolves the host itself, keeps the addresses within the policy's
// reach, refuses when none is left, and dials those addresses (never the
// name, which could resolve differently a second time). A dial for another
// host than the request's is to a proxy: then the request's host is looked
// up and checked, and the proxy dialed as it is. A dial without a policy is
// next's.
func Dial(next dialFunc) dialFunc {
	if next == nil {
		next = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		p, _ := ctx.Value(policyKey{}).(*policy)
		if p == nil {
			return next(ctx, network, addr)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(strings.Trim(host, "[]"), strings.Trim(p.host, "[]")) {
			if _, err := p.allowed(ctx, p.host); err != nil {
				return nil, err
			}
			return next(ctx, network, addr)
		}
		addrs, err := p.allowed(ctx, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			conn, err := next(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// allowed resolves host and returns its addresses within reach, or a
// RefusedError naming the first that is not when none is.
func (p *policy) allowed(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := p.net.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var ok []netip.Addr
	var refused netip.Addr
	for _, a := range addrs {
		if p.net.Classify(a)&p.reach != 0 {
			ok = append(ok, a)
		} else if !refused.IsValid() {
			refused = a
		}
	}
	if len(ok) == 0 {
		return nil, &RefusedError{Host: host, Addr: refused, Reach: p.reach}
	}
	return ok, nil
}

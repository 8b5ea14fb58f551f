package probe

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
)

// ReturnedBy is returnedBy for the external tests of the package.
var ReturnedBy = returnedBy

// PointAtLoopback makes each of names resolve to 127.0.0.1 for the probes
// the test makes from now on, guarded (Target.PublicOnly) or not, and puts
// the system's resolver back when the test ends. Not for parallel tests.
func PointAtLoopback(t testing.TB, names ...string) {
	local := map[string]bool{}
	for _, n := range names {
		local[strings.ToLower(n)] = true
	}
	loopback := netip.MustParseAddr("127.0.0.1")
	guardNetwork = dialguard.Network{Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		if local[strings.ToLower(host)] {
			return []netip.Addr{loopback}, nil
		}
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}}
	baseDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil && local[strings.ToLower(host)] {
			addr = net.JoinHostPort(loopback.String(), port)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	t.Cleanup(func() { guardNetwork, baseDial = dialguard.Network{}, nil })
}

// SetClock sets the clock a Live counts restart_every by.
func (l *Live) SetClock(now func() time.Time) { l.now = now }

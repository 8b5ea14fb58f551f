package oauth

import (
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
)

// SetNetwork gives a client a network of its own: names that resolve to
// loopback addresses, loopback addresses that count as public.
func SetNetwork(c *Client, n dialguard.Network) { c.net = n }

// SetClock gives a client a clock of its own: what it takes for now when
// it judges a stored access token's expiry.
func SetClock(c *Client, now func() time.Time) { c.clock = now }

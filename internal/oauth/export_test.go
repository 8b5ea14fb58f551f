package oauth

import "github.com/mcpwatch/mcpwatch/internal/dialguard"

// SetNetwork gives a client a network of its own: names that resolve to
// loopback addresses, loopback addresses that count as public.
func SetNetwork(c *Client, n dialguard.Network) { c.net = n }

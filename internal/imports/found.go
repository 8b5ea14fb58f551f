package imports

// Servers found by host discovery (mcpwatch discover), decoded as the
// servers of any imported client config: the same keys, checks and
// references, each from the first file that defines it.

import (
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/discover"
)

// FoundServer is a found server, decoded, or why it cannot be.
type FoundServer struct {
	Server  config.Server // its Name is the found server's unique name
	Origins []discover.Origin
	Err     error // the definition is not one mcpwatch can probe; Server is then empty
}

// FoundServers decodes every server res found, with the defaults def.
func FoundServers(res discover.Result, def config.Defaults) []FoundServer {
	out := make([]FoundServer, 0, len(res.Servers))
	for _, found := range res.Servers {
		s, err := config.DecodeEntry(entry(found.Origins[0], found.Name))
		fs := FoundServer{Origins: found.Origins, Err: err}
		if err == nil {
			fs.Server = s.Normalized(def)
		}
		out = append(out, fs)
	}
	return out
}

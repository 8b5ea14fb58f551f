package config

// Servers found by host discovery (internal/discover), decoded as the
// servers of any imported client config: the same keys, checks and
// references, each from the first file that defines it.

import (
	"github.com/mcpwatch/mcpwatch/internal/discover"
)

// FoundServer is a found server, decoded, or why it cannot be.
type FoundServer struct {
	Server  Server // its Name is the found server's unique name
	Origins []discover.Origin
	Err     error // the definition is not one mcpwatch can probe; Server is then empty
}

// FoundServers decodes every server res found, with the defaults def and the
// VS Code inputs of mcpwatch.yml.
func FoundServers(res discover.Result, def Defaults) []FoundServer {
	found := foundServers(res, nil)
	for i := range found {
		if found[i].Err == nil {
			found[i].Server = found[i].Server.Normalized(def)
		}
	}
	return found
}

// foundServers decodes every server res found; Normalize applies the
// defaults.
func foundServers(res discover.Result, inputs map[string]input) []FoundServer {
	out := make([]FoundServer, 0, len(res.Servers))
	for _, found := range res.Servers {
		o := found.Origins[0]
		d := &decoder{file: o.File}
		s, ok := clientServer(d, KeyPath(o.Key...), found.Name, o.Spec, o.Project, inputs)
		ds := FoundServer{Origins: found.Origins}
		if ok {
			ds.Server = s
		} else {
			ds.Err = d.err()
		}
		out = append(out, ds)
	}
	return out
}

// KeyPath writes a path of keys as config errors name a key:
// projects."/home/me/app".mcpServers.github.
func KeyPath(keys ...string) string {
	path := ""
	for _, k := range keys {
		path = joinKey(path, k)
	}
	return path
}

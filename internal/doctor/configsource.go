package doctor

import (
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
)

// configSource is the configuration a command run in dir with getenv's
// variables reads, as mcpwatch check chooses it (config.Discover).
type configSource struct {
	name string // as named or found, for messages
	path string // absolute
	cfg  *config.Config
	err  error // it could not be found or loaded
}

// discoverConfig chooses and loads the configuration mcpwatch check run in
// dir, with --config.file named and getenv's variables, would read.
func discoverConfig(named, dir string, getenv func(string) string) configSource {
	src, err := config.Discover(named, dir, getenv)
	out := configSource{name: src.Name, path: src.Path, err: err}
	if err == nil {
		out.cfg, out.err = imports.LoadSource(src, getenv)
	}
	return out
}

package doctor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/config"
)

// configSource is the configuration a command run in dir with getenv's
// variables reads, as mcpwatch check chooses it.
type configSource struct {
	name string // as named or found, for messages
	path string // absolute
	cfg  *config.Config
	err  error // it could not be found or loaded
}

// TEMPORARY: until config.Discover lands, the rule of cmd/mcpwatch's
// loadConfig, in dir.
func discoverConfig(named, dir string, getenv func(string) string) configSource {
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	if named != "" {
		src := configSource{name: named, path: at(named)}
		ext := strings.ToLower(filepath.Ext(named))
		if ext == ".json" || ext == ".jsonc" {
			if _, err := os.Stat(src.path); err != nil {
				src.err = err
				return src
			}
			src.cfg, src.err = config.Default(dir, func(n string) string {
				if n == config.EnvMCPConfig {
					return src.path
				}
				return getenv(n)
			})
			return src
		}
		src.cfg, src.err = config.Load(src.path)
		return src
	}
	if _, err := os.Stat(at("mcpwatch.yml")); err == nil {
		src := configSource{name: "mcpwatch.yml", path: at("mcpwatch.yml")}
		src.cfg, src.err = config.Load(src.path)
		return src
	}
	src := configSource{name: config.DefaultClientConfig}
	if v := getenv(config.EnvMCPConfig); v != "" {
		src.name = v
	}
	src.path = at(src.name)
	src.cfg, src.err = config.Default(dir, getenv)
	return src
}

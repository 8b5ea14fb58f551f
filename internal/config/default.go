package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The Python preflight's variables, honoured when there is no mcpwatch.yml so
// mcpwatch drops in where that script ran.
const (
	EnvMCPConfig    = "MCP_CONFIG"          // the client config to read; default .mcp.json
	EnvToolLock     = "MCP_TOOL_LOCK"       // the lock; default mcp-tools.lock.json
	EnvProbeTimeout = "MCP_PROBE_TIMEOUT_S" // seconds per probe, e.g. 10 or 2.5
)

// DefaultClientConfig is the client config read when none is named.
const DefaultClientConfig = ".mcp.json"

// Default builds a configuration without an mcpwatch.yml: the servers of
// .mcp.json in dir (or of $MCP_CONFIG, which may also name an mcpwatch.yml),
// the lock mcp-tools.lock.json (or $MCP_TOOL_LOCK), the timeout
// $MCP_PROBE_TIMEOUT_S. Relative paths in the variables start at dir.
func Default(dir string, getenv func(string) string) (*Config, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("default config in %s: %w", dir, err)
	}
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}

	source, named := getenv(EnvMCPConfig), true
	if source == "" {
		source, named = DefaultClientConfig, false
	}
	source = at(source)

	var cfg *Config
	if ext := strings.ToLower(filepath.Ext(source)); ext == ".yml" || ext == ".yaml" {
		if cfg, err = Load(source); err != nil {
			return nil, err
		}
	} else {
		def := BuiltinDefaults()
		timeout, err := timeoutFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		if timeout > 0 {
			def.Timeout = timeout
		}
		servers, err := loadClientConfig(source, def, nil)
		if errors.Is(err, os.ErrNotExist) {
			if named {
				return nil, fmt.Errorf("%s=%s: no such file; point it at a client config or an mcpwatch.yml", EnvMCPConfig, source)
			}
			return nil, fmt.Errorf("no mcpwatch.yml given and no %s in %s: pass -c mcpwatch.yml, set %s, or run where %s is", DefaultClientConfig, dir, EnvMCPConfig, DefaultClientConfig)
		}
		if err != nil {
			return nil, err
		}
		if len(servers) == 0 {
			return nil, &FieldError{File: source, Problem: "defines no servers to watch"}
		}
		merged, dupErrs := mergeServers(servers)
		if len(dupErrs) > 0 {
			return nil, errors.Join(dupErrs...)
		}
		cfg = &Config{Defaults: def, Servers: merged, Lock: at(DefaultLockFile)}
	}

	if lock := getenv(EnvToolLock); lock != "" {
		cfg.Lock = at(lock)
	}
	return cfg, nil
}

// timeoutFromEnv reads $MCP_PROBE_TIMEOUT_S; 0 means unset.
func timeoutFromEnv(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvProbeTimeout)
	if v == "" {
		return 0, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs <= 0 || math.IsInf(secs, 0) || math.IsNaN(secs) || secs > 86400 {
		return 0, fmt.Errorf("%s=%q is not a number of seconds; set it like 10 or 2.5", EnvProbeTimeout, v)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

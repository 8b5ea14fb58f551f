package config

// Which configuration a command reads. Every command that reads one (check,
// lock, config check, serve and its reloads) calls Discover, so they all
// choose the same file:
//
//  1. the file named with --config.file: an mcpwatch.yml, or a client
//     config (.mcp.json, claude_desktop_config.json, .vscode/mcp.json, ...),
//     told apart by its extension, else by its first character ("{");
//  2. else ./mcpwatch.yml, when there is one;
//  3. else $MCP_CONFIG (the Python preflight's variable), of either kind;
//  4. else ./.mcp.json.
//
// A client config is read as the Python preflight read it: its servers
// with the built-in defaults, $MCP_PROBE_TIMEOUT_S as their timeout, and the
// lock mcp-tools.lock.json in the working directory. $MCP_TOOL_LOCK names
// another lock for every configuration found the Python preflight's way: a
// client config, or whatever $MCP_CONFIG names. An mcpwatch.yml named with
// --config.file or found as ./mcpwatch.yml keeps the lock it names.

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// The Python preflight's variables, honoured so mcpwatch drops in where
// that script ran.
const (
	EnvMCPConfig    = "MCP_CONFIG"          // the client config to read; default .mcp.json
	EnvToolLock     = "MCP_TOOL_LOCK"       // the lock; default mcp-tools.lock.json
	EnvProbeTimeout = "MCP_PROBE_TIMEOUT_S" // seconds per probe, e.g. 10 or 2.5
)

// DefaultFile is the configuration read when none is named and there is one.
const DefaultFile = "mcpwatch.yml"

// DefaultClientConfig is the client config read when nothing else is found.
const DefaultClientConfig = ".mcp.json"

// ErrNoConfiguration is Discover's error when no file is named and none of
// the defaults exists. It matches fs.ErrNotExist too.
var ErrNoConfiguration = errors.New("no configuration")

// Source is the configuration file a command reads, as Discover chose it.
type Source struct {
	// Name is the file as named or found, for messages ("mcpwatch.yml",
	// "ci/servers.json"); Path is the same, absolute.
	Name, Path string
	// Client is true for a client config, read with the built-in defaults,
	// and false for an mcpwatch.yml.
	Client bool
	// dir is where the lock of a client config, and relative paths in the
	// variables, start.
	dir string
	// legacy is true when the Python preflight's variables apply: the file
	// came from $MCP_CONFIG or .mcp.json, or is a client config.
	legacy bool
}

// Discover chooses the configuration (rules above). named is the
// --config.file flag ("" for none), dir the working directory; relative
// paths start there. A named file that does not exist is left for Load to
// report; when nothing is named and nothing is found, the error matches
// ErrNoConfiguration and fs.ErrNotExist. The Source names what was tried
// even with an error.
func Discover(named, dir string, getenv func(string) string) (Source, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Source{Name: named}, fmt.Errorf("working directory %s: %w", dir, err)
	}
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	src := Source{dir: dir}
	switch env := getenv(EnvMCPConfig); {
	case named != "":
		src.Name, src.Path = named, at(named)
		src.Client = isClientConfig(src.Path)
		src.legacy = src.Client
		return src, nil
	case exists(at(DefaultFile)):
		src.Name, src.Path = DefaultFile, at(DefaultFile)
		return src, nil
	case env != "":
		src.Name, src.Path, src.legacy = env, at(env), true
		if !exists(src.Path) {
			return src, &missingError{msg: fmt.Sprintf("%s=%s: no such file; point it at a client config or an %s", EnvMCPConfig, src.Path, DefaultFile)}
		}
		src.Client = isClientConfig(src.Path)
		return src, nil
	}
	src.Name, src.Path, src.Client, src.legacy = DefaultClientConfig, at(DefaultClientConfig), true, true
	if !exists(src.Path) {
		return src, &missingError{nothing: true, msg: fmt.Sprintf("no %s given and no %s in %s: pass -c %s, set %s, or run where %s is",
			DefaultFile, DefaultClientConfig, dir, DefaultFile, EnvMCPConfig, DefaultClientConfig)}
	}
	return src, nil
}

// missingError is a configuration Discover did not find. It matches
// fs.ErrNotExist, and ErrNoConfiguration when nothing named one.
type missingError struct {
	msg     string
	nothing bool
}

func (e *missingError) Error() string { return e.msg }

func (e *missingError) Is(target error) bool {
	return target == fs.ErrNotExist || e.nothing && target == ErrNoConfiguration
}

// LoadSource reads the source: an mcpwatch.yml with Load, a client config
// with its servers and the built-in defaults. getenv reads the Python
// preflight's variables.
func (l *Loader) LoadSource(s Source, getenv func(string) string) (*Config, error) {
	var cfg *Config
	if !s.Client {
		var err error
		if cfg, err = l.Load(s.Path); err != nil {
			return nil, err
		}
	} else {
		timeout, err := timeoutFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		servers, err := loadClientConfig(l.Sources, s.Path, nil)
		if err != nil {
			return nil, err
		}
		if len(servers) == 0 {
			return nil, &FieldError{File: s.Path, Problem: "defines no servers to watch"}
		}
		merged, dupErrs := mergeServers(servers)
		if len(dupErrs) > 0 {
			return nil, errors.Join(dupErrs...)
		}
		cfg = &Config{Defaults: Defaults{Timeout: timeout}, Servers: merged, Lock: filepath.Join(s.dir, DefaultLockFile)}
		cfg.Normalize()
	}
	if lock := getenv(EnvToolLock); lock != "" && s.legacy {
		if !filepath.IsAbs(lock) {
			lock = filepath.Join(s.dir, lock)
		}
		cfg.Lock = lock
	}
	if s.Client {
		// An mcpwatch.yml's starter files were read by Load, beside the
		// lock it names.
		if err := cfg.applyStarterFiles(); err != nil {
			return nil, err
		}
		cfg.holdCalls()
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

// isClientConfig tells a JSON client config from an mcpwatch.yml: by
// extension, else by a first character that opens a JSON object. A file
// that cannot be read is taken for an mcpwatch.yml, whose load says why.
func isClientConfig(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".jsonc":
		return true
	case ".yml", ".yaml":
		return false
	}
	f, err := readfile.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(f)
	for {
		b, err := r.ReadByte()
		if err != nil {
			return false
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			return b == '{'
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

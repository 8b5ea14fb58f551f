package config

// Imports that are not one file:
//
//	imports:
//	  - discover: true             # every server the host's MCP clients are configured with
//	    clients: [claude-code, cursor]   # only these clients' files (default: every one)
//	    projects: [~/src/app]      # project folders to read, besides this file's own and
//	                               # those Claude Code has recorded
//	  - registry: https://registry.modelcontextprotocol.io   # an MCP Registry's API ...
//	  - registry: ./servers.json   # ... or a file of server.json entries
//	    packages: false            # true: also package entries (npx, uvx, docker: runs their code)
//	    private_remotes: false     # true: also remotes at loopback, private or link-local
//	                               # addresses, or over http (a company registry's own)
//	    optional: true             # a registry that cannot be read leaves its servers out
//	                               # (or, on reload, as they were)
//
// exclude: applies to both. Found servers are decoded as the servers of any
// client config (internal/discover, internal/registry say how each format
// maps). What an import names is read through Sources (internal/imports,
// which the Loader's caller gives it): the host, the network and the
// client files' formats stay out of this package, which decodes and checks
// what they find as it does mcpwatch.yml.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
)

// Loader loads configurations. Its Sources reads what the imports name,
// and keeps between loads what they need (a registry's mirror, so a reload
// asks only for the entries updated since the last one); nil reads no
// import, and a configuration that has one fails to load, saying so.
type Loader struct {
	Sources Sources
}

// Sources reads the servers an import names. Each method only reads: what
// it returns is decoded and checked here, as the servers of mcpwatch.yml.
type Sources interface {
	// ClientFile reads an MCP client config file (an import's path, a
	// --config.file) with the decoder host discovery reads the same files
	// with. An *fs.PathError says it could not be read; any other error,
	// that it is not valid JSON (or TOML).
	ClientFile(path string) (ClientFile, error)
	// Client reads the name of a client discovery knows, as clients:
	// writes it; Clients lists them all, for the message of an unknown one.
	Client(name string) (string, bool)
	Clients() []string
	// CheckRegistry says what is wrong with a registry API's URL: nil for
	// none.
	CheckRegistry(url string) error
	// Discover reads the servers of the discover: import im of the
	// configuration file file; Registry those of its registry: import.
	// Their errors are about the source (the host, a client's file, the
	// registry), each naming file and im.Key.
	Discover(file string, im Import) ([]Found, []error)
	Registry(file string, im Import) ([]Entry, []error)
}

// Entry is one server definition an import found, as its file writes it.
type Entry struct {
	File    string // the file (or registry) that defines it, which its errors name
	Key     string // its key there, as KeyPath writes it
	Name    string // the name it is watched by
	Project string // the folder its client runs it in: relative paths start there
	Spec    any    // its object in the client config shape; anything else is an error
}

// Found is a server host discovery found: its first definition, and the
// name that file gives it, which exclude: may name as well.
type Found struct {
	Entry
	Named string
}

// ClientFile is an MCP client config file, read.
type ClientFile struct {
	Entries []Entry // its servers, disabled ones left out
	// NoServers is true when the file holds none of the keys its client
	// keeps servers under; Keys are then its top-level keys, for a hint.
	NoServers bool
	Keys      []string
	// ServerList is a top-level "servers" list: the mcp-probe format
	// (mcpprobe.go).
	ServerList []any
}

// Import is a discover: or registry: entry of imports:, decoded.
type Import struct {
	Key      string // imports[i], for errors
	Optional bool
	Exclude  []string

	Discover bool
	Clients  []string // as Sources.Client read them
	Projects []string // resolved

	Registry       string // the registry's API URL (RegistryURL), or a file, resolved
	RegistryURL    bool
	Packages       bool
	PrivateRemotes bool // remotes at local addresses, or over http
}

// decodeImportSource reads the keys of a discover: or registry: import;
// nil for an import of a path.
func decodeImportSource(o *object, hasPath bool, dir string, src Sources) *Import {
	disc, hasDisc := o.boolean("discover")
	reg, hasReg := o.string("registry")
	clients, hasClients := o.strings("clients")
	projects, hasProjects := o.strings("projects")
	packages, hasPackages := o.boolean("packages")
	private, hasPrivate := o.boolean("private_remotes")
	if hasDisc && !disc && !hasPath {
		o.d.errorf(o.key("discover"), "is false; remove the import, or write discover: true to watch the host's configured servers")
	}
	kinds := 0
	for _, set := range []bool{hasPath, disc, hasReg} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		o.d.errorf(o.path, "give one of path:, discover: true and registry: per import; write one import for each")
		return nil
	}
	if hasClients && !disc {
		o.d.errorf(o.key("clients"), "applies only to discover: true; remove it")
	}
	if hasProjects && !disc {
		o.d.errorf(o.key("projects"), "applies only to discover: true; remove it")
	}
	if hasPackages && !hasReg {
		o.d.errorf(o.key("packages"), "applies only to registry:; remove it")
	}
	if hasPrivate && !hasReg {
		o.d.errorf(o.key("private_remotes"), "applies only to registry:; remove it")
	}
	switch {
	case disc:
		im := &Import{Discover: true}
		for i, name := range clients {
			if src == nil {
				break // the import fails as a whole (Loader.importSource)
			}
			c, ok := src.Client(name)
			if !ok {
				o.d.errorf(fmt.Sprintf("%s[%d]", o.key("clients"), i), "%q is not a client discovery knows; use %s", name, strings.Join(src.Clients(), ", "))
				continue
			}
			im.Clients = append(im.Clients, c)
		}
		for _, p := range projects {
			im.Projects = append(im.Projects, resolveLoadPath(p, dir))
		}
		return im
	case hasReg:
		if reg == "" {
			o.d.errorf(o.key("registry"), "is empty; give the URL of a registry API (https://registry.modelcontextprotocol.io) or a file of server.json entries")
			return nil
		}
		im := &Import{Registry: reg, Packages: packages, PrivateRemotes: private}
		if strings.HasPrefix(reg, "http://") || strings.HasPrefix(reg, "https://") {
			if src != nil {
				if err := src.CheckRegistry(reg); err != nil {
					o.d.errorf(o.key("registry"), "%v", err)
					return nil
				}
			}
			im.RegistryURL = true
		} else {
			im.Registry = resolveLoadPath(reg, dir)
		}
		return im
	}
	return nil
}

// importSource loads the servers of a discover: or registry: import of the
// configuration file.
func (l *Loader) importSource(file string, spec importSpec, inputs map[string]expand.Input) ([]Server, []error) {
	if l.Sources == nil {
		return nil, []error{noSources(file, spec.key)}
	}
	im := *spec.source
	im.Key, im.Optional, im.Exclude = spec.key, spec.optional, spec.exclude
	if im.Discover {
		return l.discovered(file, im, inputs)
	}
	return l.registryServers(file, im, inputs)
}

// noSources is the error of an import that a Loader without Sources meets.
func noSources(file, key string) error {
	return &FieldError{File: file, Key: key, Problem: noSourcesProblem}
}

const noSourcesProblem = "imports are not read by this loader (it has no Sources); load the file with mcpwatch's own"

func (l *Loader) discovered(file string, im Import, inputs map[string]expand.Input) ([]Server, []error) {
	found, errs := l.Sources.Discover(file, im)
	var out []Server
	for _, f := range found {
		s, err := decodeEntry(f.Entry, inputs)
		switch {
		case slices.Contains(im.Exclude, s.Name) || err != nil && slices.Contains(im.Exclude, f.Named):
		case err != nil:
			for _, e := range unjoin(err) {
				errs = append(errs, fmt.Errorf("%w; fix it, or list %s under exclude: of %s", e, f.Named, im.Key))
			}
		default:
			out = append(out, s)
		}
	}
	return out, errs
}

func (l *Loader) registryServers(file string, im Import, inputs map[string]expand.Input) ([]Server, []error) {
	entries, errs := l.Sources.Registry(file, im)
	var out []Server
	for _, e := range entries {
		if slices.Contains(im.Exclude, e.Name) {
			continue
		}
		d := &decoder{file: e.File}
		if s, ok := clientServer(d, e.Key, e.Name, e.Spec, e.Project, inputs); ok {
			// The load-time rule (registry.Options.PrivateRemotes) sees
			// only the URL; what its host resolves to is checked as the
			// probe dials.
			if s.URL != "" && !im.PrivateRemotes {
				s.PublicOnly = fmt.Sprintf("it came from a registry: set private_remotes: true on %s %s to allow it", file, im.Key)
			}
			out = append(out, s)
		} else {
			errs = append(errs, d.errs...)
		}
	}
	return out, errs
}

// DecodeEntry decodes a server an import found, as the servers of any
// client config (Normalized applies the defaults); the error is why it
// cannot be watched, naming its file and key.
func DecodeEntry(e Entry) (Server, error) { return decodeEntry(e, nil) }

func decodeEntry(e Entry, inputs map[string]expand.Input) (Server, error) {
	d := &decoder{file: e.File}
	if s, ok := clientServer(d, e.Key, e.Name, e.Spec, e.Project, inputs); ok {
		return s, nil
	}
	return Server{}, d.err()
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

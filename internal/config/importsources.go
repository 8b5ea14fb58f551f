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
// maps).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/registry"
)

// Loader loads configurations, and keeps between loads what imports
// need: each registry's mirror, so a reload asks a registry only for the
// entries updated since the last one (updated_since). The zero Loader is
// ready; the daemon keeps one for its reloads.
type Loader struct {
	// HTTPClient makes the registry requests. Default: the registry
	// package's (a minute a page).
	HTTPClient *http.Client
	// Host is the host discovery reads. Default: this one, from the
	// environment.
	Host func() (discover.Host, error)

	mu      sync.Mutex
	mirrors map[string]*registry.Mirror
}

// importSource is an import of servers that are not one client config.
type importSource struct {
	discover bool
	clients  []discover.Client
	projects []string

	registry string // the registry's API URL, or a file
	isURL    bool
	packages bool
	private  bool // private_remotes: remotes at local addresses, or over http
}

// decodeImportSource reads the keys of a discover: or registry: import;
// nil for an import of a path.
func decodeImportSource(o *object, hasPath bool, dir string) *importSource {
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
		src := &importSource{discover: true}
		for i, name := range clients {
			c, ok := discover.ParseClient(name)
			if !ok {
				var known []string
				for _, k := range discover.Clients() {
					known = append(known, string(k))
				}
				o.d.errorf(fmt.Sprintf("%s[%d]", o.key("clients"), i), "%q is not a client discovery knows; use %s", name, strings.Join(known, ", "))
				continue
			}
			src.clients = append(src.clients, c)
		}
		for _, p := range projects {
			src.projects = append(src.projects, resolveLoadPath(p, dir))
		}
		return src
	case hasReg:
		if reg == "" {
			o.d.errorf(o.key("registry"), "is empty; give the URL of a registry API (https://registry.modelcontextprotocol.io) or a file of server.json entries")
			return nil
		}
		src := &importSource{registry: reg, packages: packages, private: private}
		if strings.HasPrefix(reg, "http://") || strings.HasPrefix(reg, "https://") {
			if _, err := registry.NewMirror(reg, nil); err != nil {
				o.d.errorf(o.key("registry"), "%v", err)
				return nil
			}
			src.isURL = true
		} else {
			src.registry = resolveLoadPath(reg, dir)
		}
		return src
	}
	return nil
}

// importSource loads the servers of a discover: or registry: import of the
// configuration file.
func (l *Loader) importSource(file string, im importSpec, inputs map[string]input) ([]Server, []error) {
	if im.source.discover {
		return l.discovered(file, im, inputs)
	}
	return l.registryServers(file, im, inputs)
}

func (l *Loader) discovered(file string, im importSpec, inputs map[string]input) ([]Server, []error) {
	src := im.source
	host, err := l.host()
	if err != nil {
		return nil, []error{&FieldError{File: file, Key: im.key, Err: err, Problem: fmt.Sprintf("cannot discover the host's servers: %v", err)}}
	}
	host.Clients = src.clients
	host.Projects = append([]string{filepath.Dir(file)}, src.projects...)
	host.KnownProjects = false // another folder's project scope is imported only when named (projects:)
	res := discover.Find(host)
	var errs []error
	for _, f := range res.Files {
		if f.Err != nil {
			errs = append(errs, &FieldError{File: file, Key: im.key, Err: f.Err,
				Problem: fmt.Sprintf("%s (a %s file); fix it, or leave %s out with clients: [...]", firstLine(f.Err), f.Client, f.Client)})
		}
	}
	var out []Server
	for _, found := range foundServers(res, inputs) {
		switch {
		case contains(im.exclude, found.Server.Name) || found.Err != nil && contains(im.exclude, found.Origins[0].Name):
		case found.Err != nil:
			for _, e := range unjoin(found.Err) {
				errs = append(errs, fmt.Errorf("%w; fix it, or list %s under exclude: of %s", e, found.Origins[0].Name, im.key))
			}
		default:
			out = append(out, found.Server)
		}
	}
	return out, errs
}

func (l *Loader) registryServers(file string, im importSpec, inputs map[string]input) ([]Server, []error) {
	src := im.source
	var entries []registry.Entry
	if src.isURL {
		m, err := l.mirror(src.registry)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			_, err = m.Sync(ctx)
			cancel()
		}
		if err != nil && !im.optional {
			return nil, []error{&FieldError{File: file, Key: im.key, Err: err,
				Problem: fmt.Sprintf("cannot read the registry: %v; check the URL, or write optional: true to go on without it", err)}}
		}
		if m != nil {
			entries = m.Entries() // with optional, what the last sync read
		}
	} else {
		var err error
		entries, err = registry.ReadFile(src.registry)
		switch {
		case err == nil:
		case im.optional && errors.Is(err, fs.ErrNotExist):
			return nil, nil
		default:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = errors.New(describeFileError(err))
			}
			return nil, []error{&FieldError{File: file, Key: im.key, Err: err,
				Problem: fmt.Sprintf("registry file %s: %v", src.registry, err)}}
		}
	}
	defs, skipped := registry.Defs(entries, registry.Options{Packages: src.packages, PrivateRemotes: src.private})
	var out []Server
	var errs []error
	for _, sk := range skipped {
		if sk.Refused && !contains(im.exclude, sk.Entry) {
			errs = append(errs, &FieldError{File: file, Key: im.key, Problem: fmt.Sprintf("registry server %s: %s", sk.Entry, sk.Reason)})
		}
	}
	for _, def0 := range defs {
		if contains(im.exclude, def0.Name) {
			continue
		}
		d := &decoder{file: src.registry}
		if s, ok := clientServer(d, KeyPath(def0.Name), def0.Name, def0.Spec, filepath.Dir(file), inputs); ok {
			// The load-time rule (registry.Options.PrivateRemotes) sees
			// only the URL; what its host resolves to is checked as the
			// probe dials.
			if s.URL != "" && !src.private {
				s.publicOnly = fmt.Sprintf("it came from a registry: set private_remotes: true on %s %s to allow it", file, im.key)
			}
			out = append(out, s)
		} else {
			errs = append(errs, d.errs...)
		}
	}
	return out, errs
}

// mirror is the registry's mirror, made at its first load and kept.
func (l *Loader) mirror(apiURL string) (*registry.Mirror, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.mirrors[apiURL]; ok {
		return m, nil
	}
	m, err := registry.NewMirror(apiURL, l.HTTPClient) // nil: the registry's own default
	if err != nil {
		return nil, err
	}
	if l.mirrors == nil {
		l.mirrors = map[string]*registry.Mirror{}
	}
	l.mirrors[apiURL] = m
	return m, nil
}

func (l *Loader) host() (discover.Host, error) {
	if l.Host != nil {
		return l.Host()
	}
	return discover.HostFromEnv(runtime.GOOS, os.Getenv)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " (and more)"
	}
	return s
}

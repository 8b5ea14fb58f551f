// Package imports reads what an mcpwatch.yml imports from elsewhere: an MCP
// client's config file (with the decoder host discovery reads it with),
// the servers the host's clients are configured with (discover: true), an
// MCP Registry's entries (registry:, over the network or from a file). It
// is config.Sources: internal/config decodes and checks what it finds, as
// it does mcpwatch.yml, and reads no host, client format or network
// itself.
package imports

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/registry"
)

// sources reads imports, and keeps between loads what they need: each
// registry's mirror, so a reload asks a registry only for the entries
// updated since the last one (updated_since). The zero sources is ready.
type sources struct {
	// HTTPClient makes the registry requests. Default: the registry
	// package's (a minute a page).
	HTTPClient *http.Client
	// Host is the host discovery reads. Default: this one, from the
	// environment.
	Host func() (discover.Host, error)

	mu      sync.Mutex
	mirrors map[string]*registry.Mirror
}

var _ config.Sources = (*sources)(nil)

// NewLoader is a config.Loader that reads imports; the daemon keeps one
// for its reloads.
func NewLoader() *config.Loader { return &config.Loader{Sources: &sources{}} }

// Load reads and validates an mcpwatch.yml and what it imports (see
// config.Loader.Load), with nothing kept from an earlier load.
func Load(path string) (*config.Config, error) { return NewLoader().Load(path) }

// LoadSource reads the configuration src names (see
// config.Loader.LoadSource), with nothing kept from an earlier load.
func LoadSource(src config.Source, getenv func(string) string) (*config.Config, error) {
	return NewLoader().LoadSource(src, getenv)
}

// ClientFile reads an MCP client config file as discovery reads the
// host's.
func (*sources) ClientFile(path string) (config.ClientFile, error) {
	parsed, err := discover.ReadFile(path, "")
	if err != nil {
		return config.ClientFile{}, err
	}
	out := config.ClientFile{NoServers: parsed.NoServers, Keys: parsed.Keys, ServerList: parsed.ServerList}
	for _, o := range parsed.Origins {
		out.Entries = append(out.Entries, entry(o, o.Name))
	}
	return out, nil
}

// entry is the config.Entry of a definition discovery read, watched as
// name.
func entry(o discover.Origin, name string) config.Entry {
	return config.Entry{File: o.File, Key: config.KeyPath(o.Key...), Name: name, Project: o.Project, Spec: o.Spec}
}

// Client reads a client's name as discovery spells it.
func (*sources) Client(name string) (string, bool) {
	c, ok := discover.ParseClient(name)
	return string(c), ok
}

// Clients are the clients discovery knows, in reading order.
func (*sources) Clients() []string {
	var out []string
	for _, c := range discover.Clients() {
		out = append(out, string(c))
	}
	return out
}

// CheckRegistry says what is wrong with a registry API's URL.
func (*sources) CheckRegistry(url string) error {
	_, err := registry.NewMirror(url, nil)
	return err
}

// Discover reads the servers the host's clients are configured with, for
// the discover: import im of file: the project folder of file and those im
// names, never another project's scope unnamed.
func (s *sources) Discover(file string, im config.Import) ([]config.Found, []error) {
	host, err := s.host()
	if err != nil {
		return nil, []error{&config.FieldError{File: file, Key: im.Key, Err: err, Problem: fmt.Sprintf("cannot discover the host's servers: %v", err)}}
	}
	for _, c := range im.Clients {
		host.Clients = append(host.Clients, discover.Client(c))
	}
	host.Projects = append([]string{filepath.Dir(file)}, im.Projects...)
	host.KnownProjects = false // another folder's project scope is imported only when named (projects:)
	res := discover.Find(host)
	var errs []error
	for _, f := range res.Files {
		if f.Err != nil {
			errs = append(errs, &config.FieldError{File: file, Key: im.Key, Err: f.Err,
				Problem: fmt.Sprintf("%s (a %s file); fix it, or leave %s out with clients: [...]", firstLine(f.Err), f.Client, f.Client)})
		}
	}
	found := make([]config.Found, 0, len(res.Servers))
	for _, srv := range res.Servers {
		o := srv.Origins[0]
		found = append(found, config.Found{Entry: entry(o, srv.Name), Named: o.Name})
	}
	return found, errs
}

// Registry reads the entries of the registry: import im of file: its
// public remotes, and what im asks for besides (packages, private
// remotes). A refused entry (one that would share a variable with a server
// on another host) is an error unless im excludes it.
func (s *sources) Registry(file string, im config.Import) ([]config.Entry, []error) {
	var entries []registry.Entry
	if im.RegistryURL {
		m, err := s.mirror(im.Registry)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			_, err = m.Sync(ctx)
			cancel()
		}
		if err != nil && !im.Optional {
			return nil, []error{&config.FieldError{File: file, Key: im.Key, Err: err,
				Problem: fmt.Sprintf("cannot read the registry: %v; check the URL, or write optional: true to go on without it", err)}}
		}
		if m != nil {
			entries = m.Entries() // with optional, what the last sync read
		}
	} else {
		var err error
		entries, err = registry.ReadFile(im.Registry)
		switch {
		case err == nil:
		case im.Optional && errors.Is(err, fs.ErrNotExist):
			return nil, nil
		default:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = errors.New(pe.Err.Error()) // the path is said once, below; not a missing configuration
			}
			return nil, []error{&config.FieldError{File: file, Key: im.Key, Err: err,
				Problem: fmt.Sprintf("registry file %s: %v", im.Registry, err)}}
		}
	}
	defs, skipped := registry.Defs(entries, registry.Options{Packages: im.Packages, PrivateRemotes: im.PrivateRemotes})
	var errs []error
	for _, sk := range skipped {
		if sk.Refused && !slices.Contains(im.Exclude, sk.Entry) {
			errs = append(errs, &config.FieldError{File: file, Key: im.Key, Problem: fmt.Sprintf("registry server %s: %s", sk.Entry, sk.Reason)})
		}
	}
	out := make([]config.Entry, 0, len(defs))
	for _, d := range defs {
		out = append(out, config.Entry{File: im.Registry, Key: config.KeyPath(d.Name), Name: d.Name, Project: filepath.Dir(file), Spec: d.Spec})
	}
	return out, errs
}

// mirror is the registry's mirror, made at its first load and kept.
func (s *sources) mirror(apiURL string) (*registry.Mirror, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mirrors[apiURL]; ok {
		return m, nil
	}
	m, err := registry.NewMirror(apiURL, s.HTTPClient) // nil: the registry's own default
	if err != nil {
		return nil, err
	}
	if s.mirrors == nil {
		s.mirrors = map[string]*registry.Mirror{}
	}
	s.mirrors[apiURL] = m
	return m, nil
}

func (s *sources) host() (discover.Host, error) {
	if s.Host != nil {
		return s.Host()
	}
	return discover.HostFromEnv(runtime.GOOS, os.Getenv)
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return msg[:i] + " (and more)"
	}
	return msg
}

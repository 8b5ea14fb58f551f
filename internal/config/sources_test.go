package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/discover"
)

// clientFiles are the Sources of this package's tests: client config files
// read with the decoder internal/imports reads them with
// (discover.ReadFile). The discover: and registry: imports are tested in
// internal/imports, through the Sources mcpwatch loads with.
type clientFiles struct{}

func (clientFiles) ClientFile(path string) (ClientFile, error) {
	parsed, err := discover.ReadFile(path, "")
	if err != nil {
		return ClientFile{}, err
	}
	out := ClientFile{NoServers: parsed.NoServers, Keys: parsed.Keys, ServerList: parsed.ServerList}
	for _, o := range parsed.Origins {
		out.Entries = append(out.Entries, Entry{File: o.File, Key: KeyPath(o.Key...), Name: o.Name, Project: o.Project, Spec: o.Spec})
	}
	return out, nil
}

func (clientFiles) Client(name string) (string, bool) {
	c, ok := discover.ParseClient(name)
	return string(c), ok
}

func (clientFiles) Clients() []string {
	var out []string
	for _, c := range discover.Clients() {
		out = append(out, string(c))
	}
	return out
}

func (clientFiles) CheckRegistry(string) error { return nil }

var errNotHere = errors.New("discover: and registry: imports are tested in internal/imports")

func (clientFiles) Discover(string, Import) ([]Found, []error) { return nil, []error{errNotHere} }

func (clientFiles) Registry(string, Import) ([]Entry, []error) { return nil, []error{errNotHere} }

// load is Load with client config imports read.
func load(path string) (*Config, error) { return (&Loader{Sources: clientFiles{}}).Load(path) }

// loadSource is Loader.LoadSource with client config files read.
func loadSource(src Source, getenv func(string) string) (*Config, error) {
	return (&Loader{Sources: clientFiles{}}).LoadSource(src, getenv)
}

// Load reads no imports: a file with one fails, naming the import, and
// internal/imports is the loader that reads them.
func TestLoadWithoutSources(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	writeFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"a": {"command": "a"}}}`)
	for _, yml := range []string{"imports: [.mcp.json]\n", "imports:\n  - discover: true\n"} {
		writeFile(t, path, yml)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "imports are not read by this loader") {
			t.Errorf("%s: %v", yml, err)
		}
		if _, err := load(path); yml == "imports: [.mcp.json]\n" && err != nil {
			t.Errorf("with Sources: %v", err)
		}
	}
}

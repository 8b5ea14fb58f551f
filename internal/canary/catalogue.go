package canary

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/serverref"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The catalogue: vetted canaries of the credentialed servers people
// install most, shipped as data (catalogue.json) and reviewed like code.
// An entry names the tool that only reads and sees the credential, its
// input, its contract, and the public page that says the tool only reads.
// mcpwatch init writes an entry's contract enabled for a server it
// matches; a tool the entry vouches for is then called although it is not
// annotated read-only (see Vouches), and no other.

//go:embed catalogue.json
var catalogueJSON []byte

// CatalogueEntry is one vetted canary.
type CatalogueEntry struct {
	ID string `json:"id"`
	// Server says whose server it is, for people.
	Server string `json:"server"`
	// What it matches: an npm package (run by npx, bunx, pnpm dlx or npm
	// exec, or a script of its node_modules folder), a PyPI one (uvx,
	// pipx run) or a container image (docker or podman run), at a release
	// within Versions: pinned on the command line, or installed in that
	// node_modules folder; or a remote URL (Also: its other transports'
	// URLs).
	NPM      string   `json:"npm,omitempty"`
	PyPI     string   `json:"pypi,omitempty"`
	Image    string   `json:"image,omitempty"`
	URL      string   `json:"url,omitempty"`
	Also     []string `json:"also,omitempty"`
	Versions string   `json:"versions,omitempty"`

	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	Expect json.RawMessage `json:"expect"`
	// Reads says what the call does; Source is the public page that says
	// the tool only reads.
	Reads  string `json:"reads"`
	Source string `json:"source"`
	// Metered, when set, says the server's service counts or bills its
	// calls: how a canary of it is paced (see DefaultPace).
	Metered *Meter `json:"metered,omitempty"`

	versions []comparator
}

type catalogueFile struct {
	Entries []CatalogueEntry `json:"entries"`
}

// catalogue is the entries of catalogue.json, read once, at the first use:
// most runs of the binary (check of servers without contracts, serve,
// probe) never read it, and parsing it at start cost every one of them.
// The file is part of the binary and held to its rules by a test, so a
// broken one is a build that must not ship: it panics.
var catalogue = sync.OnceValue(func() []CatalogueEntry { return mustCatalogue(catalogueJSON) })

func mustCatalogue(data []byte) []CatalogueEntry {
	entries, err := parseCatalogue(data)
	if err != nil {
		panic("canary: catalogue.json: " + err.Error())
	}
	return entries
}

func parseCatalogue(data []byte) ([]CatalogueEntry, error) {
	var f catalogueFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		v, err := parseRange(e.Versions)
		if err != nil {
			return nil, fmt.Errorf("entry %s: versions: %w", e.ID, err)
		}
		e.versions = v
	}
	return f.Entries, nil
}

// Catalogue is every vetted canary, in the file's order.
func Catalogue() []CatalogueEntry { return append([]CatalogueEntry(nil), catalogue()...) }

// Describe is the entry for people: its ID, what the call does and where
// that is written.
func (e CatalogueEntry) Describe() string {
	return fmt.Sprintf("catalogue entry %s (%s): %s reads only, %s (%s)", e.ID, e.Server, e.Tool, e.Reads, e.Source)
}

// Vetted is the catalogue's canary for a server: the first entry that
// matches how it runs (its command and arguments, or its URL) whose tool
// it lists, and does not contradict (see contradicts). A server that
// matches none, or lists none of its tools, has none.
func Vetted(command string, args []string, rawURL string, tools []probe.Tool) (CatalogueEntry, bool) {
	for _, e := range catalogue() {
		if i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == e.Tool }); i >= 0 &&
			e.matches(command, args, rawURL) && !contradicts(tools[i]) {
			return e, true
		}
	}
	return CatalogueEntry{}, false
}

// Vouches reports whether the catalogue vetted t, as listed, as the canary
// of the server that runs so: the one case where a contract may call a
// tool that is not annotated read-only without the configuration's opt-in
// for a destructive call (the contract's "allowSideEffects" is still
// needed).
func Vouches(command string, args []string, rawURL string, t probe.Tool) bool {
	if contradicts(t) {
		return false
	}
	for _, e := range catalogue() {
		if e.Tool == t.Name && e.matches(command, args, rawURL) {
			return true
		}
	}
	return false
}

// contradicts: the server says its tool does not only read
// (readOnlyHint: false, or destructiveHint: true, in annotations mcpwatch
// trusts). The server's own word wins over the catalogue's: a version
// that changed the tool is not vouched for.
func contradicts(t probe.Tool) bool {
	h, err := t.Hints()
	if err != nil && !errors.Is(err, probe.ErrNoAnnotations) {
		return true
	}
	return (h.ReadOnlyHint != nil && !*h.ReadOnlyHint) || (h.DestructiveHint != nil && *h.DestructiveHint)
}

// matches reports whether the server that runs so is the entry's: a
// remote server by its URL, any other by the package its runner runs
// (serverref.Of: npx's package argument, uvx's, docker run's image; never
// an argument that merely equals the package's name), at a release within
// the entry's range.
func (e CatalogueEntry) matches(command string, args []string, rawURL string) bool {
	p, ok := e.serves(command, args, rawURL)
	return ok && (rawURL != "" || e.inRange(p))
}

// serves reports whether the server that runs so is the entry's package
// or URL, whatever version it runs, and which package it is (none for a
// URL): what a metered service's pacing needs, which holds at every
// version.
func (e CatalogueEntry) serves(command string, args []string, rawURL string) (serverref.Package, bool) {
	if rawURL != "" {
		if e.URL == "" {
			return serverref.Package{}, false
		}
		u := serverref.NormalURL(rawURL)
		for _, want := range append([]string{e.URL}, e.Also...) {
			if u == serverref.NormalURL(want) {
				return serverref.Package{}, true
			}
		}
		return serverref.Package{}, false
	}
	p, ok := serverref.Of(command, args)
	if !ok {
		return p, false
	}
	if p.Installed != "" {
		p.Version = installedVersion(p)
	}
	switch p.Ecosystem {
	case serverref.NPM:
		ok = e.NPM != "" && p.Name == e.NPM
	case serverref.PyPI:
		ok = e.PyPI != "" && serverref.NormalPyPI(p.Name) == serverref.NormalPyPI(e.PyPI)
	case serverref.Image:
		ok = e.Image != "" && p.Name == serverref.NormalImage(e.Image)
	default:
		ok = false
	}
	return p, ok
}

// inRange reports whether the package runs a release within the entry's
// range. A version that is no release number (a range such as ^9.0.0, a
// tag such as latest or next, an image digest, or none at all) is out of
// range: what runs is then whatever the registry resolves at each start,
// which may be a release the catalogue never vetted.
func (e CatalogueEntry) inRange(p serverref.Package) bool {
	v, ok := p.Release()
	if !ok {
		return false
	}
	for _, c := range e.versions {
		if !c.holds(v) {
			return false
		}
	}
	return true
}

// maxPackageJSON bounds the read of an installed package's package.json.
const maxPackageJSON = 1 << 20

// installedVersion is the version of a package a node script runs from a
// node_modules folder, as its package.json there says now: what is
// installed is what runs, and an update shows at the next call. "" (no
// release) when the folder is not an absolute path (a relative one is the
// server's working folder's, which is not known here), or its package.json
// cannot be read or names another package.
func installedVersion(p serverref.Package) string {
	if !filepath.IsAbs(filepath.FromSlash(p.Installed)) {
		return ""
	}
	data, err := readfile.Read(filepath.Join(filepath.FromSlash(p.Installed), "package.json"), maxPackageJSON)
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err != nil || json.Unmarshal(data, &meta) != nil || meta.Name != p.Name {
		return ""
	}
	return meta.Version
}

// comparator is one term of a range: ">=1.2.0", "<3".
type comparator struct {
	op string
	v  [3]int
}

func (c comparator) holds(v [3]int) bool {
	cmp := 0
	for i := range v {
		if v[i] != c.v[i] {
			cmp = map[bool]int{true: -1, false: 1}[v[i] < c.v[i]]
			break
		}
	}
	switch c.op {
	case ">=":
		return cmp >= 0
	case ">":
		return cmp > 0
	case "<=":
		return cmp <= 0
	case "<":
		return cmp < 0
	}
	return cmp == 0
}

// parseRange reads space-separated comparators, all of which must hold.
func parseRange(s string) ([]comparator, error) {
	var out []comparator
	for _, term := range strings.Fields(s) {
		rest := strings.TrimLeft(term, "<>=")
		op := term[:len(term)-len(rest)]
		v, ok := serverref.ParseVersion(rest)
		if !ok || (op != ">=" && op != ">" && op != "<=" && op != "<" && op != "=" && op != "") {
			return nil, fmt.Errorf("%q: want comparators such as >=1.2.0 <2.0.0", term)
		}
		out = append(out, comparator{op: op, v: v})
	}
	return out, nil
}

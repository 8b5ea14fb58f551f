package canary

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	// What it matches: an npm package (run by npx, bunx, pnpm dlx, npm
	// exec, or from a node_modules folder) within Versions, a PyPI one
	// (uvx, pipx run), a container image (docker or podman run), or a
	// remote URL (Also: its other transports' URLs).
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

// matches reports whether the server that runs so is the entry's.
func (e CatalogueEntry) matches(command string, args []string, rawURL string) bool {
	if rawURL != "" {
		if e.URL == "" {
			return false
		}
		u := normalURL(rawURL)
		for _, want := range append([]string{e.URL}, e.Also...) {
			if u == normalURL(want) {
				return true
			}
		}
		return false
	}
	words := append([]string{command}, args...)
	for _, w := range words {
		switch {
		case e.NPM != "":
			if v, ok := npmRef(w, e.NPM); ok && e.inRange(v) {
				return true
			}
		case e.PyPI != "":
			if v, ok := pypiRef(w, e.PyPI); ok && e.inRange(v) {
				return true
			}
		case e.Image != "":
			if v, ok := imageRef(w, e.Image); ok && e.inRange(v) {
				return true
			}
		}
	}
	return false
}

// npmRef reads an argument as the package: "PKG", "PKG@VERSION", or a
// path into a node_modules folder (".../node_modules/PKG/dist/index.js"),
// whose version the path does not say.
func npmRef(arg, pkg string) (version string, ok bool) {
	if arg == pkg {
		return "", true
	}
	if v, found := strings.CutPrefix(arg, pkg+"@"); found {
		return v, true
	}
	if strings.Contains(arg, "node_modules/"+pkg+"/") {
		return "", true
	}
	return "", false
}

// pypiRef reads "PKG", "PKG==VERSION" or "PKG@VERSION" (uvx's two forms).
func pypiRef(arg, pkg string) (string, bool) {
	name, v := arg, ""
	if i := strings.Index(arg, "=="); i >= 0 {
		name, v = arg[:i], arg[i+2:]
	} else if i := strings.Index(arg, "@"); i >= 0 {
		name, v = arg[:i], arg[i+1:]
	}
	// PyPI names compare case-insensitively, "-", "_" and "." alike (PEP 503).
	norm := func(s string) string { return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(s)) }
	return v, norm(name) == norm(pkg)
}

// imageRef reads "IMAGE", "IMAGE:TAG" or "IMAGE@sha256:...".
func imageRef(arg, image string) (string, bool) {
	if arg == image || strings.HasPrefix(arg, image+"@") {
		return "", true
	}
	if tag, ok := strings.CutPrefix(arg, image+":"); ok {
		return tag, true
	}
	return "", false
}

// normalURL is a URL as the catalogue compares it: scheme and host in
// lower case, no query, fragment, default port or trailing slash.
func normalURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && p != "443" {
		host += ":" + p
	}
	p := strings.TrimRight(path.Clean("/"+u.Path), "/")
	return strings.ToLower(u.Scheme) + "://" + host + p
}

// inRange reports whether a version is within the entry's range. A version
// that is not a release number ("", "latest", a digest) is taken as in
// range: what runs is then whatever the registry resolves, and the tool
// being listed is what says the entry applies.
func (e CatalogueEntry) inRange(version string) bool {
	v, ok := parseVersion(version)
	if !ok {
		return true
	}
	for _, c := range e.versions {
		if !c.holds(v) {
			return false
		}
	}
	return true
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
		v, ok := parseVersion(rest)
		if !ok || (op != ">=" && op != ">" && op != "<=" && op != "<" && op != "=" && op != "") {
			return nil, fmt.Errorf("%q: want comparators such as >=1.2.0 <2.0.0", term)
		}
		out = append(out, comparator{op: op, v: v})
	}
	return out, nil
}

// parseVersion reads MAJOR[.MINOR[.PATCH]], a leading "v" and a
// pre-release or build suffix aside.
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

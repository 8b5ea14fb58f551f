package issuer

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/serverref"
)

// The catalogue: one file a service in services/, shipped as data and
// reviewed like code. A file says how the service's credentials are
// recognised (their format, and the names, packages and URLs that carry
// them), the one documented request that tells whether a credential is
// good (an identity or key-validation endpoint that changes nothing and
// costs no quota), what its answers mean, and where it tells a
// credential's expiry and scopes. catalogue_test.go holds every file to
// the rules below; docs/credentials.md is generated from the files.

//go:embed services/*.json
var servicesFS embed.FS

// Service is one issuer of credentials, and how to ask it about one.
type Service struct {
	// ID names the file (services/ID.json): lower case letters, digits
	// and '-'.
	ID string `json:"id"`
	// Service is its name for people ("GitHub").
	Service string `json:"service"`
	// Docs is the public page that documents the request and its answers.
	Docs string `json:"docs"`
	// Cost says, in the documentation's words, why the request changes
	// nothing and spends no quota (and what rate limit applies).
	Cost string `json:"cost"`
	// Chosen says why the service is in the catalogue: which MCP servers
	// ask for its credentials.
	Chosen string `json:"chosen"`

	// Credentials are what the request sends, by role. The first is the
	// primary: the secret that is recognised (by its format and a name,
	// package or URL tied to the service) and judged. The others are its
	// companions (an account id, an e-mail, an application key), found by
	// name beside it in the same server's configuration.
	Credentials []Credential `json:"credentials"`
	// Servers are the MCP servers (packages, remote URLs) that carry the
	// service's credentials: each ties a credential of the right format to
	// the service whatever its name.
	Servers []ServerRef `json:"servers,omitempty"`
	// Base is where the request goes.
	Base Base `json:"base"`
	// Request is the request.
	Request Request `json:"request"`
	// Answers say what an answer means, the first that matches deciding;
	// an answer none matches is judged by its status alone (see Verdict).
	Answers []Answer `json:"answers"`
	// Message are the JSON paths of the service's own words in an answer
	// ("message", "errors.0.message"), quoted when it rejects.
	Message []string `json:"message,omitempty"`
	// Expiry says where an accepted answer tells the credential's expiry;
	// nil when the service never tells it.
	Expiry *Field `json:"expiry,omitempty"`
	// Scopes says where an accepted answer tells the credential's scopes;
	// nil when it does not.
	Scopes *Field `json:"scopes,omitempty"`

	primary credentialFormat
}

// Credential is one credential of a request, by its role.
type Credential struct {
	// Role names it in the request's templates ("{token}").
	Role string `json:"role"`
	// Formats are RE2 patterns a value of the credential matches whole
	// (each is anchored); a companion may have none.
	Formats []string `json:"formats,omitempty"`
	// Names are the env, header and argument names that carry it,
	// compared without case, '-' and '_' alike, a flag's leading dashes
	// dropped ("GITHUB_PERSONAL_ACCESS_TOKEN", "X-Api-Key", "--api-key").
	Names []string `json:"names"`
	// Public marks a companion that is no secret (an account's e-mail or
	// id): it may be shown, and is not scrubbed.
	Public bool `json:"public,omitempty"`
}

// ServerRef is an MCP server that carries the service's credential: an npm
// or PyPI package, a container image (as serverref reads a command), or a
// remote server's URL.
type ServerRef struct {
	NPM   string `json:"npm,omitempty"`
	PyPI  string `json:"pypi,omitempty"`
	Image string `json:"image,omitempty"`
	URL   string `json:"url,omitempty"`
	// Scopes are the scopes the server's tools need, named when the
	// service says the credential lacks one.
	Scopes []string `json:"scopes,omitempty"`

	// name is the package or URL as serverref compares it, made at load.
	name string
}

// Base is where the request goes: the documented origin, or a base the
// server's own configuration names (a self-hosted instance, a region).
type Base struct {
	// URL is the documented base (https): the request's path is appended.
	// It is empty for a service that has no one origin (every customer's
	// own site: a Jira or Shopify store, a Grafana or Elasticsearch
	// instance): then only a setting names the base, and a credential
	// whose server sets none of them is not checked.
	URL string `json:"url,omitempty"`
	// Settings are the server's own settings that move it, the first set
	// one winning.
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is a setting of the server that names a self-hosted instance
// or a region of the service: an env variable it reads, or a flag of its
// command line (read as "--flag VALUE" or "--flag=VALUE"), one of them.
type Setting struct {
	Env string `json:"env,omitempty"`
	Arg string `json:"arg,omitempty"`
	// Base makes the base of the value: "{url}" (the value is the base, as
	// an https URL), "https://{host}/api/v3" (the value's host), or
	// "https://api.{value}" (the value as written). Default "{url}".
	Base string `json:"base,omitempty"`
	// Values, instead of Base, name the base of each value the server
	// knows ("--region eu", ELEVENLABS_API_RESIDENCY=eu-residency), where
	// the base is no template of the value; a value not listed names no
	// base the catalogue knows, and the credential is not checked.
	Values map[string]string `json:"values,omitempty"`
}

// Request is the one request that asks the service about a credential.
// Templates ("{token}", "{email}") in the path, query, headers, body and
// basic auth are filled with the credentials of those roles: escaped for a
// path or a query, and refused when they would break a header.
type Request struct {
	// Method is GET, or POST for an identity method of an RPC-style API
	// (Slack's auth.test, a GraphQL viewer query).
	Method string `json:"method"`
	// Path is appended to the base ("/user").
	Path    string            `json:"path"`
	Query   map[string]string `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Basic is HTTP basic auth: user and password templates.
	Basic []string `json:"basic,omitempty"`
	// JSON is a JSON body, sent with Content-Type application/json.
	JSON json.RawMessage `json:"json,omitempty"`
}

// Answer says what one kind of answer means.
type Answer struct {
	// Status are the HTTP statuses it covers.
	Status []int `json:"status"`
	// Equal are JSON paths of the body and the value each must have (null:
	// absent or null).
	Equal map[string]any `json:"equal,omitempty"`
	// OneOf are JSON paths of the body and the values each may have.
	OneOf map[string][]any `json:"one_of,omitempty"`
	// Verdict is what it means: accepted or rejected.
	Verdict Verdict `json:"verdict"`
}

// Field is where an answer tells a value: a header, or a JSON path of the
// body.
type Field struct {
	Header string `json:"header,omitempty"`
	JSON   string `json:"json,omitempty"`
	// Layout reads a time: a Go layout ("2006-01-02 15:04:05 MST"), or
	// "rfc3339", "date" (2006-01-02, the credential dying as that day
	// starts, UTC), "unix" or "unix_ms". Unused for scopes.
	Layout string `json:"layout,omitempty"`
}

// credentialFormat is the primary credential's compiled formats.
type credentialFormat struct {
	whole []*regexp.Regexp
	// within find a value inside a longer one ("Bearer ghp_...", a JSON of
	// headers): only formats with a literal prefix of 3 bytes or more, so
	// that a shape without one (40 characters of base64) is never found
	// inside another text.
	within []*regexp.Regexp
}

var (
	// The catalogue's patterns, compiled at its first use: a pattern
	// built at package level costs every run of every command.
	patterns = sync.OnceValue(func() (p struct{ id, role, template *regexp.Regexp }) {
		p.id = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
		p.role = regexp.MustCompile(`^[a-z][a-z_]*$`)
		p.template = regexp.MustCompile(`\{([a-z][a-z_]*)\}`)
		return p
	})
)

// catalogue is every service, read once at the first use and held to the
// rules: a broken file is a build that must not ship, so it panics.
var catalogue = sync.OnceValue(func() []*Service {
	s, err := load(servicesFS)
	if err != nil {
		panic("issuer: " + err.Error())
	}
	return s
})

// Catalogue is every service, by ID.
func Catalogue() []*Service { return slices.Clone(catalogue()) }

// Lookup is the service of an ID.
func Lookup(id string) (*Service, bool) {
	for _, s := range catalogue() {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// load reads and checks every file of services/.
func load(fsys fs.FS) ([]*Service, error) {
	files, err := fs.Glob(fsys, "services/*.json")
	if err != nil {
		return nil, err
	}
	var out []*Service
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		s, err := parseService(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if want := strings.TrimSuffix(path.Base(f), ".json"); s.ID != want {
			return nil, fmt.Errorf("%s: id %q, want the file's name %q", f, s.ID, want)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// parseService decodes one file strictly and checks it.
func parseService(data []byte) (*Service, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var raw struct {
		Comment string `json:"$comment"`
		Service
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	s := raw.Service
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check holds a service to the catalogue's rules, and compiles it.
func (s *Service) check() error {
	switch {
	case !patterns().id.MatchString(s.ID):
		return fmt.Errorf("id %q: lower case letters, digits and '-'", s.ID)
	case s.Service == "" || s.Cost == "" || s.Chosen == "":
		return fmt.Errorf("service, cost and chosen are required")
	case !strings.HasPrefix(s.Docs, "https://"):
		return fmt.Errorf("docs %q: an https page", s.Docs)
	case len(s.Credentials) == 0:
		return fmt.Errorf("no credentials")
	}
	roles := map[string]bool{}
	for i, c := range s.Credentials {
		if !patterns().role.MatchString(c.Role) || roles[c.Role] {
			return fmt.Errorf("credentials[%d]: role %q is not a lower-case word, or is taken", i, c.Role)
		}
		roles[c.Role] = true
		if len(c.Names) == 0 {
			return fmt.Errorf("credential %s: no names", c.Role)
		}
		if i == 0 && (len(c.Formats) == 0 || c.Public) {
			return fmt.Errorf("credential %s: the primary credential is a secret with a format", c.Role)
		}
		for _, f := range c.Formats {
			re, err := regexp.Compile(`^(?:` + f + `)$`)
			if err != nil {
				return fmt.Errorf("credential %s: format %q: %w", c.Role, f, err)
			}
			if i > 0 {
				continue
			}
			s.primary.whole = append(s.primary.whole, re)
			if lit, _ := regexp.MustCompile(f).LiteralPrefix(); len(lit) >= 3 {
				s.primary.within = append(s.primary.within, regexp.MustCompile(`(?:^|[^A-Za-z0-9_\-.])(`+f+`)(?:$|[^A-Za-z0-9_\-])`))
			}
		}
	}
	for i, r := range s.Servers {
		ways := 0
		for _, w := range []string{r.NPM, r.PyPI, r.Image, r.URL} {
			if w != "" {
				ways++
			}
		}
		if ways != 1 {
			return fmt.Errorf("servers[%d]: one of npm, pypi, image or url", i)
		}
		if r.URL != "" && !strings.HasPrefix(r.URL, "https://") {
			return fmt.Errorf("servers[%d]: url %q is not https", i, r.URL)
		}
		switch {
		case r.NPM != "":
			s.Servers[i].name = r.NPM
		case r.PyPI != "":
			s.Servers[i].name = serverref.NormalPyPI(r.PyPI)
		case r.Image != "":
			s.Servers[i].name = serverref.NormalImage(r.Image)
		default:
			s.Servers[i].name = serverref.NormalURL(r.URL)
		}
	}
	switch {
	case s.Base.URL == "" && len(s.Base.Settings) == 0:
		return fmt.Errorf("base: a documented url, or the settings that name one")
	case s.Base.URL != "":
		if err := checkBase(s.Base.URL); err != nil {
			return fmt.Errorf("base: %w", err)
		}
	}
	for _, st := range s.Base.Settings {
		if (st.Env == "") == (st.Arg == "") || (st.Arg != "" && !strings.HasPrefix(st.Arg, "-")) {
			return fmt.Errorf("base.settings: a setting names its env variable or its flag (\"--host\"), one of them")
		}
		if st.Base != "" && st.Base != "{url}" && !strings.HasPrefix(st.Base, "https://") {
			return fmt.Errorf("base.settings %s%s: base %q is \"{url}\" or an https template", st.Env, st.Arg, st.Base)
		}
		if len(st.Values) > 0 && st.Base != "" {
			return fmt.Errorf("base.settings %s%s: base or values, one of them", st.Env, st.Arg)
		}
		for v, b := range st.Values {
			if v == "" {
				return fmt.Errorf("base.settings %s%s: an empty value", st.Env, st.Arg)
			}
			if err := checkBase(b); err != nil {
				return fmt.Errorf("base.settings %s%s: value %q: %w", st.Env, st.Arg, v, err)
			}
		}
	}
	r := s.Request
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return fmt.Errorf("request.method %q: GET, or POST for an RPC-style identity method", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") {
		return fmt.Errorf("request.path %q: starts with /", r.Path)
	}
	if len(r.Basic) != 0 && len(r.Basic) != 2 {
		return fmt.Errorf("request.basic: [user, password]")
	}
	if len(r.JSON) > 0 && !json.Valid(r.JSON) {
		return fmt.Errorf("request.json is not JSON")
	}
	used := map[string]bool{}
	texts := append([]string{r.Path, string(r.JSON)}, r.Basic...)
	for k, v := range r.Query {
		texts = append(texts, k, v)
	}
	for k, v := range r.Headers {
		if patterns().template.MatchString(k) {
			return fmt.Errorf("request.headers: a header's name %q is no template", k)
		}
		texts = append(texts, v)
	}
	for _, t := range texts {
		for _, m := range patterns().template.FindAllStringSubmatch(t, -1) {
			if !roles[m[1]] {
				return fmt.Errorf("request: {%s} is no credential's role", m[1])
			}
			used[m[1]] = true
		}
	}
	for role := range roles {
		if !used[role] {
			return fmt.Errorf("request: credential %s is never sent", role)
		}
	}
	var accepts, rejects bool
	for i, a := range s.Answers {
		if len(a.Status) == 0 {
			return fmt.Errorf("answers[%d]: no status", i)
		}
		switch a.Verdict {
		case Accepted:
			accepts = true
		case Rejected:
			rejects = true
		default:
			return fmt.Errorf("answers[%d]: verdict %q: accepted or rejected", i, a.Verdict)
		}
	}
	if !accepts || !rejects {
		return fmt.Errorf("answers: want at least one accepted and one rejected answer")
	}
	for _, f := range []*Field{s.Expiry, s.Scopes} {
		if f != nil && (f.Header == "") == (f.JSON == "") {
			return fmt.Errorf("expiry and scopes: a header or a JSON path, one of them")
		}
	}
	if s.Expiry != nil {
		if _, err := parseTime(s.Expiry.Layout, "x"); errors.Is(err, errLayout) {
			return fmt.Errorf("expiry.layout %q: a Go layout, rfc3339, date, unix or unix_ms", s.Expiry.Layout)
		}
	}
	return nil
}

// checkBase: an https URL with a host and nothing after its path.
func checkBase(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not a plain https URL", raw)
	}
	return nil
}

// errLayout is parseTime's answer for a layout it does not know.
var errLayout = errors.New("unknown layout")

// parseTime reads a time told by a service in one of the catalogue's
// layouts.
func parseTime(layout, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	switch layout {
	case "rfc3339":
		return time.Parse(time.RFC3339, v)
	case "date":
		return time.Parse(time.DateOnly, v)
	case "unix", "unix_ms":
		n := json.Number(v)
		f, err := n.Float64()
		if err != nil {
			return time.Time{}, err
		}
		if layout == "unix_ms" {
			return time.UnixMilli(int64(f)).UTC(), nil
		}
		return time.Unix(int64(f), 0).UTC(), nil
	case "":
		return time.Time{}, errLayout
	}
	if !strings.Contains(layout, "2006") {
		return time.Time{}, errLayout
	}
	return time.Parse(layout, v)
}

package issuer

import (
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/serverref"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Server is what a check needs of one server, as built for a probe:
// where it runs or connects (for the tie to a service), and every value
// it is given, by name.
type Server struct {
	Command string
	Args    []string
	URL     string
	// Values are every value the server is given, by name: "env:NAME",
	// "header:NAME", "arg:--flag" (a flag's value), "url:NAME" (a URL's
	// secret part). A credential may stand under any of them; a name the
	// catalogue knows is one of its ties.
	Values []Value
	// Env is the server's environment as it is given (its own variables):
	// companions and the settings that move a service's base are read
	// here.
	Env map[string]string
	// Untrusted says the server's command, URL and settings were chosen by
	// someone other than the user (a registry entry): its settings never
	// move a credential to another base.
	Untrusted bool
}

// Value is one value a server is given.
type Value struct {
	Name  string // "env:GITHUB_PERSONAL_ACCESS_TOKEN"
	Value string
}

// Tie is one credential of a server tied to a service: what a check of it
// sends, and where.
type Tie struct {
	Service *Service
	// Credential names the primary credential as the server is given it
	// ("env:GITHUB_PERSONAL_ACCESS_TOKEN").
	Credential string
	// By says what tied it besides its format: "name
	// GITHUB_PERSONAL_ACCESS_TOKEN", "package
	// @modelcontextprotocol/server-github", "url https://...".
	By string
	// Base is where the request goes: the documented base, or the one
	// the server's setting names (BaseFrom).
	Base     string
	BaseFrom string // "env:GITLAB_API_URL"; "" for the documented base
	// Scopes are the scopes the server's tools need, as the catalogue
	// says.
	Scopes []string
	// Skip says why it is not checked, when it cannot be: a companion is
	// missing, the base a setting names is not https. A check of a
	// skipped tie sends nothing.
	Skip string

	// values are the credentials by role.
	values map[string]string
}

// Endpoint is where the check of t goes, for people: "api.github.com GET
// /rate_limit" (the path's templates as written, never a value).
func (t Tie) Endpoint() string {
	host := t.Base
	if host == "" {
		host = "(its site, unset)"
	}
	if u, err := url.Parse(t.Base); err == nil && u.Host != "" {
		host = u.Host + strings.TrimRight(u.Path, "/")
	}
	return host + " " + t.Service.Request.Method + " " + t.Service.Request.Path
}

// Describe says, for people, which credential is checked where, and what
// it tells: "env:GITHUB_PERSONAL_ACCESS_TOKEN -> api.github.com GET
// /rate_limit, expiry from the response header"; or why it is not
// checked.
func (t Tie) Describe() string {
	if t.Skip != "" {
		return t.Credential + " (" + t.Service.Service + "): not checked: " + t.Skip
	}
	return t.Credential + " -> " + t.Endpoint() + ", " + t.Service.ExpiryWhere()
}

// Describe says, for people, what a check found: where the credential
// was checked and what the service said, "env:GITHUB_TOKEN ->
// api.github.com GET /rate_limit, expiry from the response header:
// accepted, expires 2027-01-02".
func Describe(c probe.IssuerCheck) string {
	where := c.Credential + " -> " + c.Endpoint
	if s, ok := Lookup(c.Service); ok {
		where += ", " + s.ExpiryWhere()
	}
	switch {
	case c.Verdict == Accepted && c.Expiry != nil:
		return where + ": accepted, expires " + c.Expiry.UTC().Format(time.DateOnly)
	case c.Verdict == Accepted:
		return where + ": accepted"
	case c.Note != "" && c.Status == 0 && c.Verdict == Unknown:
		return where + ": " + c.Note
	case c.Quote != "":
		return where + ": " + string(c.Verdict) + " (" + c.Quote + ")"
	}
	return where + ": " + string(c.Verdict)
}

// ExpiryWhere says where the service tells a credential's expiry.
func (s *Service) ExpiryWhere() string {
	switch {
	case s.Expiry == nil:
		return "no expiry told"
	case s.Expiry.Header != "":
		return "expiry from the response header"
	}
	return "expiry from " + s.Expiry.JSON + " in the answer"
}

// Secrets are the values t sends that are secret: what an answer must be
// scrubbed of.
func (t Tie) Secrets() []string {
	var out []string
	for _, c := range t.Service.Credentials {
		if v := t.values[c.Role]; v != "" && !c.Public {
			out = append(out, v)
		}
	}
	return out
}

// key says which credential a tie checks, wherever: the service, the base
// and the values it sends.
func (t Tie) key() string {
	var b strings.Builder
	b.WriteString(t.Service.ID)
	b.WriteByte(0)
	b.WriteString(t.Base)
	for _, c := range t.Service.Credentials {
		b.WriteByte(0)
		b.WriteString(t.values[c.Role])
	}
	return b.String()
}

// Match ties the server's credentials to the services of the catalogue.
// A value is tied to a service only by two signals: it has the format of
// the service's credential (whole, or inside a longer value such as
// "Bearer ghp_..." when the format starts with a literal prefix), and its
// name, the server's package or the server's URL is one the catalogue ties
// to the service. One tie a service and credential value; in the order of
// the server's values.
func Match(s Server) []Tie {
	if len(s.Values) == 0 {
		return nil
	}
	pkg, hasPkg := serverref.Of(s.Command, s.Args)
	normURL := ""
	if s.URL != "" {
		normURL = serverref.NormalURL(s.URL)
	}
	// The second signal first, by a lookup: a value is read against the
	// formats of only the services its name or its server ties it to.
	var bySrv []served
	for _, svc := range catalogue() {
		if by, scopes := svc.servedBy(pkg, hasPkg, normURL); by != "" {
			bySrv = append(bySrv, served{svc, by, scopes})
		}
	}
	var out []Tie
	seen := map[string]bool{}
	for _, v := range s.Values {
		name := valueName(v.Name)
		candidates := bySrv
		for _, svc := range byName()[normName(name)] {
			if i := slices.IndexFunc(candidates, func(c served) bool { return c.svc == svc }); i >= 0 {
				candidates = append(slices.Clone(candidates[:i]), candidates[i+1:]...)
			}
			candidates = append(candidates, served{svc: svc, by: "name " + name, scopes: scopesOf(bySrv, svc)})
		}
		for _, c := range candidates {
			token, ok := c.svc.primary.find(v.Value)
			if !ok {
				continue
			}
			t := Tie{Service: c.svc, Credential: v.Name, By: c.by, Scopes: c.scopes,
				values: map[string]string{c.svc.Credentials[0].Role: token}}
			t.companions(s)
			t.base(s)
			if k := t.key(); !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Credential < out[j].Credential })
	return out
}

// served is a service the catalogue ties a server to, and how: by its
// package or URL (with the scopes its tools need), or by a value's name.
type served struct {
	svc    *Service
	by     string
	scopes []string
}

// scopesOf are the scopes the server's tools need of svc, when the server
// is one the catalogue lists for it.
func scopesOf(list []served, svc *Service) []string {
	for _, c := range list {
		if c.svc == svc {
			return c.scopes
		}
	}
	return nil
}

// byName is the services of the catalogue by the names of their primary
// credentials, as normName has them.
var byName = sync.OnceValue(func() map[string][]*Service {
	out := map[string][]*Service{}
	for _, svc := range catalogue() {
		for _, n := range svc.Credentials[0].Names {
			out[normName(n)] = append(out[normName(n)], svc)
		}
	}
	return out
})

// Expect is what Match would tie from the configuration alone, before any
// value is known (mcpwatch doctor starts no server and reads no secret):
// each value's name, the server's package or its URL tied to a service.
// Each is checked only if its value turns out to have the service's
// format; the ties carry no value.
func Expect(s Server) []Tie {
	pkg, hasPkg := serverref.Of(s.Command, s.Args)
	var out []Tie
	for _, svc := range catalogue() {
		bySrv, scopes := svc.servedBy(pkg, hasPkg, serverref.NormalURL(s.URL))
		for _, v := range s.Values {
			by := bySrv
			if svc.Credentials[0].named(valueName(v.Name)) {
				by = "name " + valueName(v.Name)
			}
			if by == "" {
				continue
			}
			t := Tie{Service: svc, Credential: v.Name, By: by, Scopes: scopes, values: map[string]string{}}
			t.base(s)
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Credential < out[j].Credential })
	return out
}

// servedBy says whether the server is one the catalogue ties to svc (the
// package its command runs, or its URL as serverref.NormalURL has it), and
// the scopes its tools need.
func (svc *Service) servedBy(pkg serverref.Package, hasPkg bool, normURL string) (by string, scopes []string) {
	for _, r := range svc.Servers {
		switch {
		case hasPkg && r.NPM != "" && pkg.Ecosystem == serverref.NPM && r.name == pkg.Name,
			hasPkg && r.PyPI != "" && pkg.Ecosystem == serverref.PyPI && r.name == serverref.NormalPyPI(pkg.Name),
			hasPkg && r.Image != "" && pkg.Ecosystem == serverref.Image && r.name == pkg.Name:
			return "package " + pkg.Name, r.Scopes
		case normURL != "" && r.URL != "" && r.name == normURL:
			return "url " + r.name, r.Scopes
		}
	}
	return "", nil
}

// find is the credential in a value: the whole value, or a token of the
// format inside it.
func (f credentialFormat) find(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxValue {
		return "", false
	}
	for _, re := range f.whole {
		if re.MatchString(v) {
			return v, true
		}
	}
	for _, re := range f.within {
		if m := re.FindStringSubmatch(v); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// maxValue bounds the values searched for a credential: a credential, or
// the header JSON one is inside, is short.
const maxValue = 16 << 10

// named reports whether name is one of the credential's names: without
// case, '-' and '_' alike, a flag's dashes dropped.
func (c Credential) named(name string) bool {
	n := normName(name)
	return slices.ContainsFunc(c.Names, func(x string) bool { return normName(x) == n })
}

func normName(s string) string {
	s = strings.TrimLeft(s, "-")
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// valueName is a value's name without its kind: "env:GITHUB_TOKEN" is
// "GITHUB_TOKEN", "arg:--api-key" "--api-key".
func valueName(n string) string {
	_, name, ok := strings.Cut(n, ":")
	if !ok {
		return n
	}
	return name
}

// companions finds the other credentials of the request beside the
// primary, by name, in the server's environment.
func (t *Tie) companions(s Server) {
	for _, c := range t.Service.Credentials[1:] {
		for name, v := range s.Env {
			if v != "" && c.named(name) {
				t.values[c.Role] = v
				break
			}
		}
		if t.values[c.Role] == "" && t.Skip == "" {
			t.Skip = "its " + c.Role + " (" + strings.Join(c.Names, " or ") + ") is not set beside it"
		}
	}
}

// base is where the check goes: the documented base, unless a setting the
// catalogue names moves it (a self-hosted instance, a region: the server's
// env variable or command-line flag). A base that is not https, a setting
// of an untrusted server, or a setting that looks like it names the
// service's host but that the catalogue does not know, skips the check:
// asked at the documented host, a credential of another instance would
// look rejected. A service with no documented base (every customer's own
// site) is checked only where a setting names the site.
func (t *Tie) base(s Server) {
	t.Base = t.Service.Base.URL
	for _, st := range t.Service.Base.Settings {
		v, name := st.read(s)
		if v == "" {
			continue
		}
		if s.Untrusted {
			t.skip("its base is moved by " + name + ", which a registry entry set: not checked")
			return
		}
		b, ok := st.make(v)
		if !ok {
			if len(st.Values) > 0 {
				t.skip(name + " names a " + t.Service.Service + " base the catalogue does not know: not checked")
			} else {
				t.skip(name + " does not name an https URL: the check goes only over verified HTTPS")
			}
			return
		}
		t.Base, t.BaseFrom = b, name
		return
	}
	if t.Service.Base.URL == "" {
		t.skip("no setting names its " + t.Service.Service + " site (" + strings.Join(t.Service.settingNames(), ", ") + ")")
		return
	}
	if name, ok := t.Service.unknownSetting(s.Env); ok {
		t.skip(name + " may name another instance of " + t.Service.Service + " than the catalogue's " + t.Service.Base.URL + ": not checked")
	}
}

func (t *Tie) skip(why string) {
	if t.Skip == "" {
		t.Skip = why
	}
}

// read is the setting's value in the server's configuration, and its name
// ("env:GITLAB_API_URL", "arg:--gh-host"); "" when it is not set.
func (st Setting) read(s Server) (value, name string) {
	if st.Env != "" {
		return strings.TrimSpace(s.Env[st.Env]), "env:" + st.Env
	}
	for i, a := range s.Args {
		if a == st.Arg && i+1 < len(s.Args) {
			return strings.TrimSpace(s.Args[i+1]), "arg:" + st.Arg
		}
		if v, ok := strings.CutPrefix(a, st.Arg+"="); ok {
			return strings.TrimSpace(v), "arg:" + st.Arg
		}
	}
	return "", ""
}

// settingNames are the names of the settings that move the service.
func (svc *Service) settingNames() []string {
	var out []string
	for _, st := range svc.Base.Settings {
		out = append(out, st.Env+st.Arg)
	}
	return out
}

// make is the base a setting's value names, when it is https: the value
// itself ("{url}"), a template of its host or of the value as written, or
// the base a table of values gives.
func (st Setting) make(v string) (string, bool) {
	if len(st.Values) > 0 {
		b, ok := st.Values[v]
		if !ok {
			b, ok = st.Values[strings.ToLower(v)]
		}
		return b, ok
	}
	tmpl := st.Base
	if tmpl == "" {
		tmpl = "{url}"
	}
	u, err := url.Parse(v)
	if err == nil && u.Scheme != "" && u.Host != "" && u.Scheme != "https" {
		return "", false
	}
	var b string
	switch tmpl {
	case "{url}":
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			return "", false
		}
		u.RawQuery, u.Fragment = "", ""
		b = strings.TrimRight(u.String(), "/")
	default:
		host := v
		if err == nil && u.Host != "" {
			host = u.Host
		}
		// A host, or a value written into one, holds nothing but a host
		// name's characters: no path, user or port trick moves the request
		// off the template's host.
		if !hostChars(host) || strings.Contains(tmpl, "{value}") && !hostChars(v) {
			return "", false
		}
		b = strings.NewReplacer("{host}", host, "{value}", strings.Trim(strings.ToLower(v), ".")).Replace(tmpl)
	}
	if checkBase(b) != nil {
		return "", false
	}
	return b, true
}

// hostChars: letters, digits, '-' and '.', and a port's ':' and digits.
func hostChars(h string) bool {
	if h == "" || strings.HasPrefix(h, ".") || strings.HasPrefix(h, "-") {
		return false
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || r == ':' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// baseWords are the words of a setting that names where a service is.
var baseWords = []string{"URL", "HOST", "DOMAIN", "ENDPOINT", "SERVER", "BASE", "SITE", "REGION", "INSTANCE", "API"}

// unknownSetting finds a variable of the server's environment that looks
// like it moves the service (it starts with the stem of the credential's
// names, "GITLAB_", and names a URL, a host, a site...) but is none of the
// catalogue's settings.
func (svc *Service) unknownSetting(env map[string]string) (string, bool) {
	stems := map[string]bool{}
	for _, n := range svc.Credentials[0].Names {
		if stem, _, ok := strings.Cut(normName(n), "_"); ok && len(stem) >= 3 {
			stems[stem+"_"] = true
		}
	}
	known := map[string]bool{}
	for _, st := range svc.Base.Settings {
		if st.Env != "" {
			known[normName(st.Env)] = true
		}
	}
	for _, c := range svc.Credentials {
		for _, n := range c.Names {
			known[normName(n)] = true
		}
	}
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := normName(name)
		if known[n] || strings.TrimSpace(env[name]) == "" {
			continue
		}
		for stem := range stems {
			if !strings.HasPrefix(n, stem) {
				continue
			}
			for _, w := range strings.Split(strings.TrimPrefix(n, stem), "_") {
				if slices.Contains(baseWords, w) && looksLikeWhere(env[name]) {
					return name, true
				}
			}
		}
	}
	return "", false
}

// looksLikeWhere: a value that is a URL or a host name, not a flag, a
// number or a file (a CA to trust, SLACK_MCP_SERVER_CA=/etc/ssl/ca.pem,
// says nothing of where the service is).
func looksLikeWhere(v string) bool {
	v = strings.TrimSpace(v)
	if strings.Contains(v, "://") {
		return true
	}
	file := strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~") ||
		strings.ContainsRune(v, '\\') || len(v) > 2 && v[1] == ':' && (v[2] == '/' || v[2] == '\\')
	return !file && strings.Contains(v, ".") && !strings.ContainsAny(v, " ")
}

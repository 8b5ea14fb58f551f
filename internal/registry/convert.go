package registry

// How an entry becomes servers to watch, in the client config shape
// internal/config decodes ({"type", "url", "headers"} or {"command",
// "args", "env"}).
//
// Every value the user must supply becomes a ${VAR} reference named after
// the server, a short hash of its exact name and host and the input, upper-cased
// with "_" for any other character: the header X-API-Key of
// io.github.acme/weather reads ${IO_GITHUB_ACME_WEATHER_<HASH>_X_API_KEY}
// (the hash of "io.github.acme/weather", a 0 byte and "host " and its
// URL's host).
// The hash keeps names of different publishers apart where the upper
// casing alone would not (io.github.acme/weather with X-API-Key, and
// io.github.acme-weather/x with API-Key); and a variable that would still
// feed servers on different hosts is refused (Defs). A non-secret input with a default
// reads ${VAR:-default}; a secret one never gets a value, whatever the
// entry says. An input with a fixed value (not secret) is written as it is.
// An optional input with no value and no default is left out.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/dialguard"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Def is one server to watch, from an entry.
type Def struct {
	Name  string         // the entry's name, with @TYPE when the entry gives several servers
	Entry string         // the entry's name
	Kind  string         // streamable-http, sse, or the package's registry type
	Spec  map[string]any // the server in the client config shape
	Vars  []string       // the variables its references name, which the user must set (those with a default included)
}

// Skipped is an entry, or a part of one, that is not watched, and why.
type Skipped struct {
	Entry  string
	Reason string
	// Refused is true when watching it would be unsafe (a variable shared
	// with a server on another host), not merely outside what is asked.
	Refused bool
}

// Options say what of a registry is imported beyond its public remotes.
type Options struct {
	// Packages imports package entries too: they run the package, someone
	// else's code.
	Packages bool
	// PrivateRemotes imports remotes at loopback, private or link-local
	// addresses, and over plain http: a registry could otherwise aim
	// requests with the headers it chooses at the host's own services (a
	// cloud metadata address).
	PrivateRemotes bool
}

// Defs turns entries into servers to watch, as opt says.
func Defs(entries []Entry, opt Options) ([]Def, []Skipped) {
	var defs []Def
	var skipped []Skipped
	for _, e := range entries {
		d, s := e.defs(opt)
		defs = append(defs, d...)
		skipped = append(skipped, s...)
	}
	return refuseShared(defs, skipped)
}

// refuseShared leaves out every server whose variable also feeds a server
// on another host (or another package): the user sets one value, and it
// would reach both.
func refuseShared(defs []Def, skipped []Skipped) ([]Def, []Skipped) {
	type use struct{ dest, name string }
	users := map[string][]use{}
	for _, d := range defs {
		for _, v := range d.Vars {
			users[v] = append(users[v], use{d.dest(), d.Name})
		}
	}
	bad := map[string]string{}
	for v, us := range users {
		for _, u := range us[1:] {
			if u.dest != us[0].dest {
				for _, x := range us {
					bad[x.name] = fmt.Sprintf("the variable %s would feed servers on different hosts (%s and %s); refused, so one publisher's secret never reaches another's server: exclude one of them", v, us[0].name, u.name)
				}
			}
		}
	}
	if len(bad) == 0 {
		return defs, skipped
	}
	kept := defs[:0]
	for _, d := range defs {
		if why, ok := bad[d.Name]; ok {
			skipped = append(skipped, Skipped{Entry: d.Name, Reason: why, Refused: true})
			continue
		}
		kept = append(kept, d)
	}
	return kept, skipped
}

func (e Entry) defs(opt Options) ([]Def, []Skipped) {
	var defs []Def
	var skipped []Skipped
	for _, r := range e.Remotes {
		d, err := e.remoteDef(r, opt.PrivateRemotes)
		if err != "" {
			skipped = append(skipped, Skipped{Entry: e.Name, Reason: err})
			continue
		}
		defs = append(defs, d)
	}
	for _, p := range e.Packages {
		if !opt.Packages {
			skipped = append(skipped, Skipped{Entry: e.Name, Reason: fmt.Sprintf("a %s package: runs someone else's code, so it is imported only with packages: true", p.RegistryType)})
			continue
		}
		d, err := e.packageDef(p)
		if err != "" {
			skipped = append(skipped, Skipped{Entry: e.Name, Reason: err})
			continue
		}
		defs = append(defs, d)
	}
	if len(e.Remotes) == 0 && len(e.Packages) == 0 {
		skipped = append(skipped, Skipped{Entry: e.Name, Reason: "neither a remote nor a package"})
	}
	// One server keeps the entry's name; several are told apart by kind.
	if len(defs) > 1 {
		count := map[string]int{}
		for i := range defs {
			count[defs[i].Kind]++
			defs[i].Name = e.Name + "@" + defs[i].Kind
			if n := count[defs[i].Kind]; n > 1 {
				defs[i].Name += fmt.Sprintf("-%d", n)
			}
		}
	}
	return defs, skipped
}

func (e Entry) remoteDef(r Remote, private bool) (Def, string) {
	typ, _ := probe.ParseTransport(r.Type)
	if typ != probe.TransportHTTP && typ != probe.TransportSSE {
		return Def{}, fmt.Sprintf("a remote of type %q, which is neither streamable-http nor sse", r.Type)
	}
	if r.URL == "" {
		return Def{}, "a remote without a url"
	}
	if why := privateRemote(fixedValues(r.URL, r.Variables)); why != "" && !private {
		return Def{}, why + "; imported only with private_remotes: true"
	}
	v := vars{server: e.Name, dest: "host " + remoteHost(fixedValues(r.URL, r.Variables))}
	spec := map[string]any{"type": string(typ), "url": v.template(r.URL, r.Variables)}
	headers := map[string]any{}
	for _, h := range r.Headers {
		if h.Name == "" {
			continue
		}
		if val, ok := v.input(h.Name, h); ok {
			headers[h.Name] = val
		}
	}
	if len(headers) > 0 {
		spec["headers"] = headers
	}
	return Def{Name: e.Name, Entry: e.Name, Kind: r.Type, Spec: spec, Vars: v.names}, ""
}

func (e Entry) packageDef(p Package) (Def, string) {
	if t, _ := probe.ParseTransport(p.Transport); p.Transport != "" && t != probe.TransportStdio {
		return Def{}, fmt.Sprintf("a %s package serving %s: mcpwatch watches a running server's URL, and does not start one", p.RegistryType, p.Transport)
	}
	if p.Identifier == "" {
		return Def{}, fmt.Sprintf("a %s package without an identifier", p.RegistryType)
	}
	fam, known := families[p.RegistryType]
	if !known {
		return Def{}, fmt.Sprintf("a %s package, which mcpwatch cannot start (npm, pypi, nuget and oci it can)", p.RegistryType)
	}
	if strings.HasPrefix(p.Identifier, "-") {
		return Def{}, fmt.Sprintf("a %s package whose identifier starts with \"-\", which %s would read as an option", p.RegistryType, fam.runtimes[0])
	}
	if p.RuntimeHint != "" && !contains(fam.runtimes, p.RuntimeHint) {
		return Def{}, fmt.Sprintf("a %s package whose runtimeHint is not one of %s (the runtimes of %s packages): refused, as it would run another program",
			p.RegistryType, strings.Join(fam.runtimes, ", "), p.RegistryType)
	}
	for _, a := range p.RuntimeArgs {
		if a.Type != "named" || !contains(fam.runtimeArgs, a.Name) {
			what := "a positional runtime argument"
			if a.Type == "named" {
				what = "the runtime argument " + strconv.Quote(sanitize.Truncate(a.Name, 64))
			}
			return Def{}, fmt.Sprintf("a %s package with %s: refused; mcpwatch passes %s only %s", p.RegistryType, what, fam.runtimes[0], strings.Join(fam.runtimeArgs, ", "))
		}
	}
	v := vars{server: e.Name, dest: "package"}
	args := func(list []Input) []any {
		var out []any
		for _, a := range list {
			out = append(out, v.argument(a)...)
		}
		return out
	}
	env := map[string]any{}
	for _, in := range p.Env {
		if in.Name == "" {
			continue
		}
		if val, ok := v.input(in.Name, in); ok {
			env[in.Name] = val
		}
	}
	runtime, pkgArgs := args(p.RuntimeArgs), args(p.PackageArgs)
	var command string
	var argv []any
	switch p.RegistryType {
	case "npm":
		command, argv = "npx", []any{"-y", literal(versioned(p.Identifier, "@", p.Version))}
	case "pypi":
		command, argv = "uvx", []any{literal(versioned(p.Identifier, "==", p.Version))}
	case "nuget":
		command, argv = "dnx", []any{literal(versioned(p.Identifier, "@", p.Version)), "--yes"}
	case "oci":
		command, argv = "docker", []any{"run", "-i", "--rm"}
		for _, name := range sortedKeys(env) {
			argv = append(argv, "-e", name)
		}
		argv = append(argv, runtime...)
		runtime = nil
		image := p.Identifier
		if p.Version != "" && !strings.Contains(image[strings.LastIndex(image, "/")+1:], ":") {
			image += ":" + p.Version
		}
		argv = append(argv, literal(image))
	}
	if p.RuntimeHint != "" {
		command = literal(p.RuntimeHint)
	}
	if len(runtime) > 0 && p.RegistryType != "oci" {
		// Runtime arguments replace the runtime's defaults ("-y" for npx).
		if p.RegistryType == "npm" {
			argv = argv[1:]
		}
		argv = append(runtime, argv...)
	}
	spec := map[string]any{"command": command, "args": append(argv, pkgArgs...)}
	if len(env) > 0 {
		spec["env"] = env
	}
	return Def{Name: e.Name, Entry: e.Name, Kind: p.RegistryType, Spec: spec, Vars: v.names}, ""
}

// dest is where a server's variables go: its URL's host, or its package.
func (d Def) dest() string {
	if u, ok := d.Spec["url"].(string); ok {
		return "host " + remoteHost(u)
	}
	return "package " + d.Entry
}

// privateRemote says why a remote's URL is not a public https one, or "":
// the rule the OAuth client applies to what a server publishes
// (internal/util/dialguard). A host given by name is checked here only when it
// names this machine (localhost); what it resolves to is checked as the
// probe dials.
func privateRemote(raw string) string {
	if !strings.HasPrefix(strings.ToLower(raw), "https://") {
		return "a remote that is not https"
	}
	host := remoteHost(raw)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "a remote on this machine (" + host + ")"
	}
	if a, err := netip.ParseAddr(host); err == nil && !dialguard.IsPublic(a) {
		return "a remote at a loopback, private or link-local address (" + a.String() + ")"
	}
	return ""
}

// fixedValues writes a URL's {variable} templates that have a fixed value
// (not secret) with it, and keeps the others as written.
func fixedValues(s string, variables map[string]Input) string {
	return templateRef.ReplaceAllStringFunc(s, func(m string) string {
		if in, ok := variables[m[1:len(m)-1]]; ok && in.Value != "" && !in.Secret {
			return in.Value
		}
		return m
	})
}

// remoteHost is the host a remote's URL names, as written (a {template}
// kept: a host chosen by a variable is its own host).
func remoteHost(raw string) string {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.ToLower(rest)
}

// family is what may run a kind of package: its runtimes (the first the
// default), and the runtime arguments passed to them. Anything else could
// run another program (a runtimeHint of /bin/sh) or give the package the
// host (docker run --privileged -v /:/host --pid=host).
type family struct {
	runtimes    []string
	runtimeArgs []string
}

var families = map[string]family{
	"npm":   {runtimes: []string{"npx", "bunx"}, runtimeArgs: []string{"-y", "--yes", "--quiet", "--prefer-offline"}},
	"pypi":  {runtimes: []string{"uvx"}, runtimeArgs: []string{"--prerelease", "--quiet", "-q"}},
	"nuget": {runtimes: []string{"dnx"}, runtimeArgs: []string{"--yes", "--prerelease"}},
	"oci": {runtimes: []string{"docker", "podman"}, runtimeArgs: []string{"-e", "--env", "--init", "--read-only",
		"--platform", "--pull", "-t", "--tty"}},
}

func versioned(id, sep, version string) string {
	if version == "" {
		return id
	}
	return id + sep + version
}

// vars writes the references of one server's inputs and remembers the
// variables they name.
type vars struct {
	server string
	dest   string // where the values go (Def.dest)
	names  []string
}

// ref is a reference to the variable of input name: with the default,
// unless the input is secret (a secret never gets a value from the entry).
func (v *vars) ref(name string, in Input) string {
	varName := envName(v.server) + "_" + nameHash(v.server, v.dest) + "_" + envName(name)
	if !contains(v.names, varName) {
		v.names = append(v.names, varName)
	}
	if in.Default != "" && !in.Secret && !strings.Contains(in.Default, "}") {
		return "${" + varName + ":-" + literal(in.Default) + "}"
	}
	return "${" + varName + "}"
}

// input is the value of a header, a variable or an argument; ok is false
// for an optional input left out.
func (v *vars) input(name string, in Input) (string, bool) {
	switch {
	case in.Value != "" && (!in.Secret || templateRef.MatchString(in.Value)):
		return v.template(in.Value, in.Variables), true
	case in.Required || in.Secret || in.Default != "":
		return v.ref(name, in), true
	}
	return "", false
}

// argument is a package argument as command-line words.
func (v *vars) argument(a Input) []any {
	switch a.Type {
	case "named":
		if a.Value == "" && a.ValueHint == "" && !a.Required && a.Default == "" {
			return []any{literal(a.Name)} // a flag of its own
		}
		val, ok := v.input(strings.TrimLeft(a.Name, "-"), a)
		if !ok {
			return nil
		}
		return []any{literal(a.Name) + "=" + val}
	default: // positional
		name := a.ValueHint
		if name == "" {
			name = a.Name
		}
		if a.Value == "" && name == "" {
			return nil
		}
		val, ok := v.input(name, a)
		if !ok {
			return nil
		}
		return []any{val}
	}
}

var templateRef = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// template rewrites a value with {variable} templates: each one a variable
// of the value becomes its reference (or its fixed value); the text around
// is literal.
func (v *vars) template(s string, variables map[string]Input) string {
	var b strings.Builder
	last := 0
	for _, m := range templateRef.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(literal(s[last:m[0]]))
		name := s[m[2]:m[3]]
		in, ok := variables[name]
		switch {
		case !ok:
			b.WriteString(literal(s[m[0]:m[1]])) // unknown: kept as written, as the format says
		case in.Value != "" && !in.Secret:
			b.WriteString(literal(in.Value))
		default:
			b.WriteString(v.ref(name, in))
		}
		last = m[1]
	}
	b.WriteString(literal(s[last:]))
	return b.String()
}

// nameHash is 12 hex digits of the SHA-256 of an entry's exact name and
// where its variables go (a remote's host, or the package): it tells apart
// names that envName makes one, and gives each host of an entry a variable
// of its own. 48 bits: finding a name that collides costs days of hashing,
// and refuseShared refuses the one that does.
func nameHash(server, dest string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + dest))
	return strings.ToUpper(hex.EncodeToString(sum[:6]))
}

// envName makes a variable name: upper case, any other character "_".
func envName(s string) string {
	var b strings.Builder
	underscore := false
	for _, r := range strings.ToUpper(s) {
		ok := r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		switch {
		case ok:
			b.WriteRune(r)
			underscore = false
		case !underscore && b.Len() > 0:
			b.WriteByte('_')
			underscore = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// literal escapes a value mcpwatch must not expand.
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

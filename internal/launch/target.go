package launch

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Resolve expands the ${...} references of s and resolves its
// relative paths, giving what a probe needs (Build does it for every
// probe, so a rotated secret file or a changed variable is seen without a
// restart), with every credential the server is given and whether it has
// a value now; lookup reads a variable (os.LookupEnv fits). The credentials are the env and header
// values whose name says credential (secret.IsCredentialName: the rule the
// scrubber and the redaction use) and the auth: block's client_secret and
// refresh_token, and the credentials written in the arguments or the URL
// (secret.ArgSecrets, secret.URLSecrets: "--api-key ${KEY}",
// "--token=${T}", a URL's userinfo or api_key= query), named "env:NAME",
// "header:NAME", "auth:client_secret", "auth:refresh_token",
// "arg:--api-key", "arg:userinfo", "url:api_key" (never by value). One is missing (Present false,
// Why saying what was unset or empty) when a reference in it without a
// default, ${VAR}, ${env:VAR}, ${file:PATH} or ${input:ID}, gave no value:
// a variable unset (a secret never exported, `env -u`) or empty (what CI
// gives an unset secret), an emptied token file, or a ${VAR:?message}
// unset or empty. Unset and empty are one problem to whoever is paged, so
// they are one state and one alert. A value written empty is missing
// too (a placeholder never filled in). ${VAR:-} says "may be empty" and is
// never missing; another literal value is what the configuration says. A
// variable elsewhere (a command, an argument that is no credential, a
// ${file:...} path) must be set: unset, it is an error.
// A missing credential is not an error: the caller decides (the runner
// does not probe, and reports credential_missing); every other expansion
// problem is an *expand.Error naming the server and the key, never the
// value.
func Resolve(s config.Server, lookup func(string) (string, bool)) (probe.Target, []probe.GivenCredential, error) {
	t, given, errs := target(s, lookup, false)
	if len(errs) > 0 {
		return probe.Target{}, given, errs[0]
	}
	return t, given, nil
}

// Missing returns the credentials among given that are not present.
func Missing(given []probe.GivenCredential) []probe.GivenCredential {
	var out []probe.GivenCredential
	for _, g := range given {
		if !g.Present {
			out = append(out, g)
		}
	}
	return out
}

// Check tries to build every server's target now and reports each problem
// apart: an unset variable, an unreadable ${file:...}, a command not found,
// a missing cwd or CA file. Errors name the server, its file and the key,
// never a value. Load does not read variables (they are read at every
// probe); `mcpwatch config check` calls this to show what a probe would
// meet.
func Check(c *config.Config, lookup func(string) (string, bool)) []error {
	var errs []error
	for _, s := range c.Servers {
		t, given, targetErrs := target(s, lookup, true)
		errs = append(errs, targetErrs...)
		if len(targetErrs) == 0 {
			errs = append(errs, checkPaths(s, t, lookup)...)
		}
		for _, g := range Missing(given) {
			errs = append(errs, fmt.Errorf("server %q (%s) %s: credential missing: %s; a probe would fail with credential_missing (set it, or write ${VAR:-} where empty is fine)", s.Name, s.Source, credentialKey(g.Credential), g.Why))
		}
		if _, err := OAuth(s, lookup); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// target expands every field of s, and checks the presence of each
// credential (see Resolve); with all set it goes on after an error to
// report every one.
func target(s config.Server, lookup func(string) (string, bool), all bool) (probe.Target, []probe.GivenCredential, []error) {
	b := &build{s: s, all: all,
		x: expand.Expander{Lookup: lookup, BaseDir: s.BaseDir, Inputs: s.Inputs, Workspace: s.Workspace}}
	t := probe.Target{
		InheritEnv:         s.InheritEnv,
		Transport:          s.Transport,
		InsecureSkipVerify: s.Insecure,
		Era:                s.Era,
	}
	if s.Command != "" {
		b.command(&t)
	}
	if s.URL != "" {
		b.remote(&t)
	}
	if !b.stopped() {
		b.writtenCredentials()
	}
	if a := s.Auth; a != nil {
		// OAuth reads these at every probe, and reports what cannot be read.
		b.present("auth:client_secret", a.ClientSecret)
		b.present("auth:refresh_token", a.RefreshToken)
	}
	if len(b.errs) > 0 {
		return probe.Target{}, b.given, b.errs
	}
	return t, b.given, nil
}

// build is one server's target as it is built: what it has met so far.
type build struct {
	s     config.Server
	x     expand.Expander
	all   bool // go on after an error (Check), else stop at the first
	errs  []error
	given []probe.GivenCredential
}

// stopped reports that an error ends the build: nothing more is read.
func (b *build) stopped() bool { return len(b.errs) > 0 && !b.all }

// fail notes the error of the value at key, naming the server.
func (b *build) fail(key string, err error) {
	var ee *expand.Error
	if errors.As(err, &ee) {
		ee.Server, ee.Key, ee.Source = b.s.Name, key, b.s.Source
	}
	b.errs = append(b.errs, err)
}

// value expands the value at key.
func (b *build) value(key, v string) string { return b.expand(key, v, b.x.Expand) }

// path expands a path at key and resolves it against the server's folder.
func (b *build) path(key, p string) string { return b.expand(key, p, b.x.ExpandPath) }

// expand gives the value at key as f makes it, noting f's error.
func (b *build) expand(key, v string, f func(string) (string, error)) string {
	if b.stopped() {
		return ""
	}
	out, err := f(v)
	if err != nil {
		b.fail(key, err)
	}
	return out
}

// credential expands the value at key of a credential named name, noting
// whether it has a value (expand.Expander.Credential).
func (b *build) credential(name, key, v string) string {
	if b.stopped() {
		return ""
	}
	out, why, err := b.x.Credential(v)
	if err != nil {
		b.fail(key, err)
		return out
	}
	b.note(name, why)
	return out
}

// present notes whether a credential written inside a longer value is
// there, without expanding the value again: an argument's flag value, a
// URL's userinfo or api_key= (secret.ArgSecrets, secret.URLSecrets), an
// auth: block's secret. An error is left for the expansion of the whole
// value to report.
func (b *build) present(name, v string) {
	if v == "" {
		return
	}
	if _, why, err := b.x.Credential(v); err == nil {
		b.note(name, why)
	}
}

func (b *build) note(name string, why []string) {
	b.given = append(b.given, probe.GivenCredential{Credential: name, Present: len(why) == 0, Why: strings.Join(why, "; ")})
}

// command builds what starts a command server: its command, arguments,
// environment (the env file's, then env's) and folder.
func (b *build) command(t *probe.Target) {
	s := b.s
	t.Command = b.value("command", s.Command)
	if strings.Contains(t.Command, "/") {
		t.Command, _ = b.x.Path(t.Command)
	}
	if len(s.Args) > 0 {
		t.Args = make([]string, len(s.Args))
		for i, a := range s.Args {
			t.Args[i] = b.value(fmt.Sprintf("args[%d]", i), a)
		}
	}
	if s.EnvFile != "" {
		t.Env = b.envFile(b.path("envFile", s.EnvFile))
	}
	t.Env = b.values("env", s.Env, t.Env)
	if s.Dir != "" {
		t.Dir = b.path("cwd", s.Dir)
	}
}

// remote builds what reaches a URL server: its URL, headers and CA.
func (b *build) remote(t *probe.Target) {
	s := b.s
	t.URL = b.value("url", s.URL)
	if s.PublicOnly != "" {
		t.PublicOnly, t.PublicOnlyFix = true, s.PublicOnly
	}
	t.Headers = b.values("headers", s.Headers, nil)
	if s.CAFile != "" {
		t.CAFile = b.path("tls.ca_file", s.CAFile)
		if !b.stopped() {
			t.CA = b.ca(t.CAFile)
		}
	}
}

// values expands the env or headers (kind) of the server into into (made
// when nil and there are any); a value whose name says credential is one
// (env:NAME, header:NAME).
func (b *build) values(kind string, m, into map[string]string) map[string]string {
	if len(m) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]string, len(m))
	}
	credential := strings.TrimSuffix(kind, "s") + ":"
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := config.KeyPath(kind, k)
		if secret.IsCredentialName(k) {
			into[k] = b.credential(credential+k, key, m[k])
		} else {
			into[k] = b.value(key, m[k])
		}
	}
	return into
}

// writtenCredentials notes the credentials written in the arguments and
// the URL (secret.ArgSecrets, secret.URLSecrets).
func (b *build) writtenCredentials() {
	s := b.s
	for _, sp := range secret.ArgSecrets(s.Args) {
		if sp.Credential {
			b.present("arg:"+sp.Name, s.Args[sp.Arg][sp.Start:sp.End])
		}
	}
	for _, sp := range secret.URLSecrets(s.URL) {
		if sp.Credential {
			b.present("url:"+sp.Name, s.URL[sp.Start:sp.End])
		}
	}
}

// credentialKey is the configuration key of a credential's name
// ("env:GITHUB_TOKEN" -> env.GITHUB_TOKEN), for messages.
func credentialKey(name string) string {
	kind, key, _ := strings.Cut(name, ":")
	switch kind {
	case "header":
		return config.KeyPath("headers", key)
	case "auth":
		return config.KeyPath("auth", key)
	case "arg":
		return "args (" + key + ")"
	case "url":
		return "url (" + key + ")"
	}
	return config.KeyPath(kind, key)
}

// envFile reads the server's envFile.
func (b *build) envFile(path string) map[string]string {
	if path == "" {
		return nil
	}
	fail := func(cause error, format string, args ...any) map[string]string {
		b.errs = append(b.errs, &expand.Error{Server: b.s.Name, Source: b.s.Source, Key: "envFile",
			Kind: expand.ErrSecretFile, File: path, Cause: cause, Problem: fmt.Sprintf(format, args...)})
		return nil
	}
	data, err := expand.ReadSecret(path)
	if err != nil {
		return fail(err, "cannot read env file %s: %s; create it or fix envFile", path, expand.FileProblem(err))
	}
	env, err := parseEnvFile([]byte(data))
	if err != nil {
		return fail(err, "env file %s: %v; fix the file", path, err)
	}
	return env
}

// ca reads the server's CA file (ReadCA) once, as the target is built:
// the probe gets the bytes.
func (b *build) ca(path string) []byte {
	data, err := ReadCA(path)
	if err != nil {
		b.errs = append(b.errs, &expand.Error{Server: b.s.Name, Source: b.s.Source, Key: "tls.ca_file", Kind: expand.ErrSecretFile, File: path, Cause: err,
			Problem: fmt.Sprintf("%s: %s; fix the path or the file", path, expand.FileProblem(err))})
		return nil
	}
	return data
}

// ReadCA reads a CA file through the bounded reader (a FIFO there hung a
// probe past SIGTERM) and tests it as the probe does (probe.CertPool), so
// that a file without a certificate fails config check, not every probe.
func ReadCA(path string) ([]byte, error) {
	data, err := readfile.Read(path, config.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if _, err := probe.CertPool(data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkPaths reports what would make a spawn or a TLS setup fail before
// the server is even reached.
func checkPaths(s config.Server, t probe.Target, lookup func(string) (string, bool)) []error {
	var errs []error
	problem := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("server %q (%s) %s: %s", s.Name, s.Source, key, fmt.Sprintf(format, args...)))
	}
	if t.Command != "" {
		if strings.Contains(t.Command, "/") {
			if err := checkExecutable(t.Command); err != nil {
				problem("command", "%s is not an executable file (%s); fix the path or build it", t.Command, expand.FileProblem(err))
			}
		} else if !inPath(t.Command, lookup) {
			problem("command", "%s is not found in PATH; install it or give its full path", t.Command)
		}
	}
	if t.Dir != "" {
		if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
			problem("cwd", "%s is not a directory; create it or fix cwd", t.Dir)
		}
	}
	return errs
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	if fi.Mode()&0o111 == 0 {
		return errors.New("not executable")
	}
	return nil
}

// inPath looks name up in the PATH the server would get (the probe passes
// mcpwatch's PATH on), without exec.LookPath's use of the process
// environment.
func inPath(name string, lookup func(string) (string, bool)) bool {
	pathVar, _ := lookup("PATH")
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		if checkExecutable(filepath.Join(dir, name)) == nil {
			return true
		}
	}
	return false
}

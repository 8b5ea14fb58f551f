package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Server returns the server called name.
func (c *Config) Server(name string) (Server, bool) {
	i := sort.Search(len(c.Servers), func(i int) bool { return c.Servers[i].Name >= name })
	if i < len(c.Servers) && c.Servers[i].Name == name {
		return c.Servers[i], true
	}
	return Server{}, false
}

// Resolve expands the server's ${...} references and resolves its
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
func (s Server) Resolve(lookup func(string) (string, bool)) (probe.Target, []probe.GivenCredential, error) {
	t, given, errs := s.target(lookup, false)
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
func (c *Config) Check(lookup func(string) (string, bool)) []error {
	var errs []error
	for _, s := range c.Servers {
		t, given, targetErrs := s.target(lookup, true)
		errs = append(errs, targetErrs...)
		if len(targetErrs) == 0 {
			errs = append(errs, s.checkPaths(t, lookup)...)
		}
		for _, g := range Missing(given) {
			errs = append(errs, fmt.Errorf("server %q (%s) %s: credential missing: %s; a probe would fail with credential_missing (set it, or write ${VAR:-} where empty is fine)", s.Name, s.Source, credentialKey(g.Credential), g.Why))
		}
		if _, err := s.OAuth(lookup); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// target expands every field, and checks the presence of each credential
// (see Resolve); with all set it goes on after an error to report every
// one.
func (s Server) target(lookup func(string) (string, bool), all bool) (probe.Target, []probe.GivenCredential, []error) {
	x := expand.Expander{Lookup: lookup, BaseDir: s.baseDir, Inputs: s.inputs, Workspace: s.workspace}
	var errs []error
	var given []probe.GivenCredential
	fail := func(key string, err error) {
		var ee *expand.Error
		if errors.As(err, &ee) {
			ee.Server, ee.Key, ee.Source = s.Name, key, s.Source
		}
		errs = append(errs, err)
	}
	expandAt := func(key, value string) string {
		if len(errs) > 0 && !all {
			return ""
		}
		v, err := x.Expand(value)
		if err != nil {
			fail(key, err)
		}
		return v
	}
	// credential expands a credential's value, noting whether it is there.
	credential := func(name, key, value string) string {
		if len(errs) > 0 && !all {
			return ""
		}
		var why []string
		if value == "" { // a placeholder never filled in, or a shell's empty $VAR
			why = append(why, "it is written empty")
		}
		cx := x
		cx.Missing = func(w string) { why = append(why, w) }
		v, err := cx.Expand(value)
		if ee := (*expand.Error)(nil); errors.As(err, &ee) && errors.Is(err, expand.ErrRequired) {
			why, v, err = append(why, ee.Problem), "", nil
		}
		if err != nil {
			fail(key, err)
			return v
		}
		given = append(given, probe.GivenCredential{Credential: name, Present: len(why) == 0, Why: strings.Join(why, "; ")})
		return v
	}

	t := probe.Target{
		InheritEnv:         s.InheritEnv,
		Transport:          s.Transport,
		InsecureSkipVerify: s.Insecure,
		Era:                s.Era,
	}
	if s.Command != "" {
		t.Command = expandAt("command", s.Command)
		if strings.Contains(t.Command, "/") {
			t.Command = resolvePath(t.Command, s.baseDir, lookup)
		}
		if len(s.Args) > 0 {
			t.Args = make([]string, len(s.Args))
			for i, a := range s.Args {
				t.Args[i] = expandAt(fmt.Sprintf("args[%d]", i), a)
			}
		}
		if s.EnvFile != "" {
			t.Env = s.readEnvFile(expandAt("envFile", s.EnvFile), lookup, &errs)
		}
		if len(s.Env) > 0 {
			if t.Env == nil {
				t.Env = make(map[string]string, len(s.Env))
			}
			for _, k := range sortedKeys(s.Env) {
				if secret.IsCredentialName(k) {
					t.Env[k] = credential("env:"+k, joinKey("env", k), s.Env[k])
				} else {
					t.Env[k] = expandAt(joinKey("env", k), s.Env[k])
				}
			}
		}
		if s.Dir != "" {
			t.Dir = resolvePath(expandAt("cwd", s.Dir), s.baseDir, lookup)
		}
	}
	if s.URL != "" {
		t.URL = expandAt("url", s.URL)
		if s.publicOnly != "" {
			t.PublicOnly, t.PublicOnlyFix = true, s.publicOnly
		}
		if len(s.Headers) > 0 {
			t.Headers = make(map[string]string, len(s.Headers))
			for _, k := range sortedKeys(s.Headers) {
				if secret.IsCredentialName(k) {
					t.Headers[k] = credential("header:"+k, joinKey("headers", k), s.Headers[k])
				} else {
					t.Headers[k] = expandAt(joinKey("headers", k), s.Headers[k])
				}
			}
		}
		if s.CAFile != "" {
			t.CAFile = resolvePath(expandAt("tls.ca_file", s.CAFile), s.baseDir, lookup)
			if len(errs) == 0 || all {
				t.CA = s.readCA(t.CAFile, &errs)
			}
		}
	}
	// present notes whether a credential written inside a longer value is
	// there, without expanding the value again: an argument's flag value, a
	// URL's userinfo or api_key= (secret.ArgSecrets, secret.URLSecrets), an
	// auth: block's secret (OAuth reads those at every probe, and reports
	// what cannot be read).
	present := func(name, value string) {
		if value == "" {
			return
		}
		var why []string
		cx := x
		cx.Missing = func(w string) { why = append(why, w) }
		_, err := cx.Expand(value)
		if ee := (*expand.Error)(nil); errors.As(err, &ee) && errors.Is(err, expand.ErrRequired) {
			why, err = append(why, ee.Problem), nil
		}
		if err == nil {
			given = append(given, probe.GivenCredential{Credential: name, Present: len(why) == 0, Why: strings.Join(why, "; ")})
		}
	}
	if len(errs) == 0 || all {
		for _, sp := range secret.ArgSecrets(s.Args) {
			if sp.Credential {
				present("arg:"+sp.Name, s.Args[sp.Arg][sp.Start:sp.End])
			}
		}
		for _, sp := range secret.URLSecrets(s.URL) {
			if sp.Credential {
				present("url:"+sp.Name, s.URL[sp.Start:sp.End])
			}
		}
	}
	if a := s.Auth; a != nil {
		present("auth:client_secret", a.ClientSecret)
		present("auth:refresh_token", a.RefreshToken)
	}
	if len(errs) > 0 {
		return probe.Target{}, given, errs
	}
	return t, given, nil
}

// credentialKey is the configuration key of a credential's name
// ("env:GITHUB_TOKEN" -> env.GITHUB_TOKEN), for messages.
func credentialKey(name string) string {
	kind, key, _ := strings.Cut(name, ":")
	switch kind {
	case "header":
		return joinKey("headers", key)
	case "auth":
		return joinKey("auth", key)
	case "arg":
		return "args (" + key + ")"
	case "url":
		return "url (" + key + ")"
	}
	return joinKey(kind, key)
}

// readEnvFile reads the server's envFile; a problem is appended to errs.
func (s Server) readEnvFile(path string, lookup func(string) (string, bool), errs *[]error) map[string]string {
	if path == "" {
		return nil
	}
	path = resolvePath(path, s.baseDir, lookup)
	fail := func(cause error, format string, args ...any) map[string]string {
		*errs = append(*errs, &expand.Error{Server: s.Name, Source: s.Source, Key: "envFile",
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

// readCA reads the server's CA file (ReadCA) once, as the target is built:
// the probe gets the bytes. A problem is appended to errs.
func (s Server) readCA(path string, errs *[]error) []byte {
	data, err := ReadCA(path)
	if err != nil {
		*errs = append(*errs, &expand.Error{Server: s.Name, Source: s.Source, Key: "tls.ca_file", Kind: expand.ErrSecretFile, File: path, Cause: err,
			Problem: fmt.Sprintf("%s: %s; fix the path or the file", path, expand.FileProblem(err))})
		return nil
	}
	return data
}

// ReadCA reads a CA file through the bounded reader (a FIFO there hung a
// probe past SIGTERM) and tests it as the probe does (probe.CertPool), so
// that a file without a certificate fails config check, not every probe.
func ReadCA(path string) ([]byte, error) {
	data, err := readfile.Read(path, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	if _, err := probe.CertPool(data); err != nil {
		return nil, err
	}
	return data, nil
}

// resolvePath resolves an expanded path: "~/" by expandHome, a relative
// path against base.
func resolvePath(p, base string, lookup func(string) (string, bool)) string {
	if p == "" {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		p, _ = expand.Home(p, lookup)
		return p
	}
	if filepath.IsAbs(p) || base == "" {
		return p
	}
	return filepath.Join(base, p)
}

// checkPaths reports what would make a spawn or a TLS setup fail before
// the server is even reached.
func (s Server) checkPaths(t probe.Target, lookup func(string) (string, bool)) []error {
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

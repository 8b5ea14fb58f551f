package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

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

// Target expands the server's ${...} references and resolves its relative
// paths, giving what a probe needs. The daemon calls it before every probe,
// so a rotated secret file or a changed variable is seen without a restart.
// lookup reads a variable; os.LookupEnv fits. The error is an *ExpandError
// naming the server and the key, never the value.
func (s Server) Target(lookup func(string) (string, bool)) (probe.Target, error) {
	t, errs := s.target(lookup, false)
	if len(errs) > 0 {
		return probe.Target{}, errs[0]
	}
	return t, nil
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
		t, targetErrs := s.target(lookup, true)
		errs = append(errs, targetErrs...)
		if len(targetErrs) == 0 {
			errs = append(errs, s.checkPaths(t, lookup)...)
		}
		if _, err := s.OAuth(lookup); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// target expands every field; with all set it goes on after an error to
// report every one.
func (s Server) target(lookup func(string) (string, bool), all bool) (probe.Target, []error) {
	x := expander{lookup: lookup, baseDir: s.baseDir, inputs: s.inputs, workspace: s.workspace}
	var errs []error
	expand := func(key, value string) string {
		if len(errs) > 0 && !all {
			return ""
		}
		v, err := x.expand(value)
		if err != nil {
			var ee *ExpandError
			if errors.As(err, &ee) {
				ee.Server, ee.Key, ee.Source = s.Name, key, s.Source
			}
			errs = append(errs, err)
		}
		return v
	}

	t := probe.Target{
		InheritEnv:         s.InheritEnv,
		Transport:          s.Transport,
		InsecureSkipVerify: s.Insecure,
		Era:                s.Era,
	}
	if s.Command != "" {
		t.Command = expand("command", s.Command)
		if strings.Contains(t.Command, "/") {
			t.Command = resolvePath(t.Command, s.baseDir, lookup)
		}
		if len(s.Args) > 0 {
			t.Args = make([]string, len(s.Args))
			for i, a := range s.Args {
				t.Args[i] = expand(fmt.Sprintf("args[%d]", i), a)
			}
		}
		if s.EnvFile != "" {
			t.Env = s.readEnvFile(expand("envFile", s.EnvFile), lookup, &errs)
		}
		if len(s.Env) > 0 {
			if t.Env == nil {
				t.Env = make(map[string]string, len(s.Env))
			}
			for _, k := range sortedKeys(s.Env) {
				t.Env[k] = expand(joinKey("env", k), s.Env[k])
			}
		}
		if s.Dir != "" {
			t.Dir = resolvePath(expand("cwd", s.Dir), s.baseDir, lookup)
		}
	}
	if s.URL != "" {
		t.URL = expand("url", s.URL)
		if len(s.Headers) > 0 {
			t.Headers = make(map[string]string, len(s.Headers))
			for _, k := range sortedKeys(s.Headers) {
				t.Headers[k] = expand(joinKey("headers", k), s.Headers[k])
			}
		}
		if s.CAFile != "" {
			t.CAFile = resolvePath(expand("tls.ca_file", s.CAFile), s.baseDir, lookup)
		}
	}
	if len(errs) > 0 {
		return probe.Target{}, errs
	}
	return t, nil
}

// readEnvFile reads the server's envFile; a problem is appended to errs.
func (s Server) readEnvFile(path string, lookup func(string) (string, bool), errs *[]error) map[string]string {
	if path == "" {
		return nil
	}
	path = resolvePath(path, s.baseDir, lookup)
	fail := func(cause error, format string, args ...any) map[string]string {
		*errs = append(*errs, &ExpandError{Server: s.Name, Source: s.Source, Key: "envFile",
			Kind: ErrSecretFile, File: path, Cause: cause, msg: fmt.Sprintf(format, args...)})
		return nil
	}
	data, err := readSecretFile(path)
	if err != nil {
		return fail(err, "cannot read env file %s: %s; create it or fix envFile", path, describeFileError(err))
	}
	env, err := parseEnvFile([]byte(data))
	if err != nil {
		return fail(err, "env file %s: %v; fix the file", path, err)
	}
	return env
}

// resolvePath resolves an expanded path: "~/" against $HOME, a relative
// path against base.
func resolvePath(p, base string, lookup func(string) (string, bool)) string {
	if p == "" {
		return p
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && lookup != nil {
		if home, ok := lookup("HOME"); ok && home != "" {
			return filepath.Join(home, rest)
		}
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
				problem("command", "%s is not an executable file (%s); fix the path or build it", t.Command, describeFileError(err))
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
	if t.CAFile != "" {
		if _, err := os.ReadFile(t.CAFile); err != nil {
			problem("tls.ca_file", "cannot read %s (%s); fix the path", t.CAFile, describeFileError(err))
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

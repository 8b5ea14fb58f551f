package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/glob"
	"github.com/mcpwatch/mcpwatch/probe"
)

// serverKeys are the names a file format gives a server's fields, so an
// error points at the key the user wrote (transport in mcpwatch.yml, type in
// a client config).
type serverKeys struct {
	prefix    string // servers.report, mcpServers.report
	transport string
	caFile    string
}

// checkRef reports a malformed ${...} reference in the value at key.
func (d *decoder) checkRef(key, value string) {
	if err := expand.Check(value); err != nil {
		if e := (*expand.Error)(nil); errors.As(err, &e) {
			d.errorf(key, "%s", e.Problem)
		} else {
			d.errorf(key, "%v", err)
		}
	}
}

// checkServer reports what no single key can show on its own: a server that
// is both or neither a process and a URL, malformed ${...} references,
// URLs, variable and header names, forbid patterns.
func checkServer(d *decoder, s *Server, keys serverKeys) {
	at := func(k string) string { return joinKey(keys.prefix, k) }
	switch {
	case s.Command != "" && s.URL != "":
		d.errorf(keys.prefix, "both command and url are set; a server is either a process mcpwatch starts (command) or a remote server (url): keep one")
	case s.Command == "" && s.URL == "":
		d.errorf(keys.prefix, "neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server)")
	}

	d.checkRef(at("command"), s.Command)
	for i, a := range s.Args {
		d.checkRef(fmt.Sprintf("%s[%d]", at("args"), i), a)
	}
	for _, k := range sortedKeys(s.Env) {
		if !validEnvName(k) {
			d.errorf(joinKey(at("env"), k), "is not a usable variable name: it must be non-empty and hold no '=' or NUL")
		}
		d.checkRef(joinKey(at("env"), k), s.Env[k])
	}
	d.checkRef(at("envFile"), s.EnvFile)
	d.checkRef(at("cwd"), s.Dir)
	d.checkRef(at("url"), s.URL)
	for _, k := range sortedKeys(s.Headers) {
		if !validHeaderName(k) {
			d.errorf(joinKey(at("headers"), k), "is not a valid HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)")
		}
		d.checkRef(joinKey(at("headers"), k), s.Headers[k])
	}
	d.checkRef(keys.caFile, s.CAFile)

	if s.URL != "" && !strings.Contains(s.URL, "${") {
		if problem := checkURL(s.URL); problem != "" {
			d.errorf(at("url"), "%s", problem)
		}
	}
	if s.URL != "" && s.Transport == probe.TransportStdio {
		d.errorf(joinKey(keys.prefix, keys.transport), "stdio is for command servers; use http, sse or auto with a url")
	}
	checkForbid(d, at("forbid"), s.Forbid)
}

// checkURL returns what is wrong with a URL, without repeating it: a URL
// may carry a token in its query or userinfo.
func checkURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a valid URL; write it like https://mcp.example.com/mcp"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must start with http:// or https://"
	}
	if u.Host == "" {
		return "has no host; write it like https://mcp.example.com/mcp"
	}
	return ""
}

func validEnvName(k string) bool {
	return k != "" && !strings.ContainsAny(k, "=\x00")
}

// validHeaderName is probe.ValidHeaderName: the probe refuses what load
// lets through otherwise.
func validHeaderName(k string) bool { return probe.ValidHeaderName(k) }

func parseEra(s string) (probe.Era, bool) {
	switch e := probe.Era(s); e {
	case probe.EraAuto, probe.EraModern, probe.EraLegacy:
		return e, true
	}
	return "", false
}

// parseSize reads a byte count: a YAML integer, or a string as
// bytesize reads a flag's.
func parseSize(v any) (int64, bool) {
	if n, ok := asInt(v); ok {
		return n, n > 0
	}
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	n, err := bytesize.Parse(s)
	return n, err == nil
}

// checkForbid reports each forbid pattern at key that is not a valid glob.
func checkForbid(d *decoder, key string, patterns []string) {
	for i, pattern := range patterns {
		if err := glob.Check(pattern); err != nil {
			d.errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid glob (%v); use * (any characters, / included), ? and [a-z], and escape a literal one with \\", pattern, err)
		}
	}
}

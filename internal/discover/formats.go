package discover

// Each client's file format, turned into one shape: a server object as
// Claude Code, Cursor and VS Code write it ({"command", "args", "env",
// "cwd", "envFile"} or {"type", "url", "headers"}), which internal/config
// decodes and validates. References are rewritten into mcpwatch's syntax
// where a client's differ: Codex expands nothing (a literal "$" is escaped
// as "$$"), Gemini CLI expands $VAR as well as ${VAR}, Codex names the
// variables that hold a bearer token and headers.

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/mcpwatch/mcpwatch/internal/util/jsonc"
)

// entry is one server definition read from a file.
type entry struct {
	name    string
	key     []string // its path in the file, for messages
	scope   Scope
	project string // the folder the client runs it in
	spec    any    // an object in the shape above; anything else is an error internal/config reports
}

// parse reads the servers of one file. projects are the folders Claude
// Code has recorded in ~/.claude.json (only for formatClaudeCode). What a
// user-scope file records of project folders (consent.go) goes to cs, when
// not nil.
func parse(c candidate, data []byte, cs *consent) (entries []entry, projects []string, err error) {
	if c.scope != ScopeUser {
		cs = nil // a project never speaks for its own trust
	}
	switch c.format {
	case formatClaudeCode:
		return parseClaudeCode(c, data, cs)
	case formatCodex:
		entries, err = parseCodex(c, data, cs)
		return entries, nil, err
	}
	top, err := jsonc.Object(c.path, data, strictJSON(c.client))
	if err != nil {
		return nil, nil, fileError(c.path, err)
	}
	entries, err = parseJSON(c, top)
	return entries, nil, err
}

// parseJSON reads the servers of a JSON file's object. A value where the
// servers are kept that is not an object is an error: the client would
// start none.
func parseJSON(c candidate, top map[string]any) ([]entry, error) {
	key := serversKey(c.format)
	if has(top, key...) {
		var v any = top
		for _, k := range key {
			v = v.(map[string]any)[k]
		}
		if _, ok := v.(map[string]any); !ok && v != nil {
			return nil, &jsonc.Error{File: c.path, Problem: strings.Join(key, ".") + ": expected a mapping, got " + jsonKind(v)}
		}
	}
	switch c.format {
	case formatVSCode:
		return objectEntries(c, top, identity, "servers"), nil
	case formatVSCodeSettings:
		return objectEntries(c, top, identity, "mcp", "servers"), nil
	case formatWindsurf:
		return objectEntries(c, top, windsurfSpec, "mcpServers"), nil
	case formatGemini:
		return geminiEntries(c, top), nil
	}
	return objectEntries(c, top, identity, "mcpServers"), nil
}

func identity(spec map[string]any) map[string]any { return spec }

// objectEntries reads the server objects at key (a path of keys) in top.
func objectEntries(c candidate, top map[string]any, convert func(map[string]any) map[string]any, key ...string) []entry {
	m := top
	for _, k := range key {
		m, _ = m[k].(map[string]any)
	}
	project := c.project
	if project == "" {
		project = ProjectDir(c.path)
	}
	return serverEntries(m, key, c.scope, project, convert)
}

func serverEntries(m map[string]any, key []string, scope Scope, project string, convert func(map[string]any) map[string]any) []entry {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []entry
	for _, name := range names {
		spec := m[name]
		if obj, ok := spec.(map[string]any); ok {
			if disabled, _ := obj["disabled"].(bool); disabled {
				continue // the client does not start it
			}
			spec = convert(obj)
		}
		out = append(out, entry{name: name, key: append(slices.Clone(key), name), scope: scope, project: project, spec: spec})
	}
	return out
}

// parseClaudeCode reads ~/.claude.json: user-scope servers at the top, and
// each project's local-scope servers under projects.<folder>. The file also
// holds Claude Code's history and can be large: only these keys are
// decoded.
func parseClaudeCode(c candidate, data []byte, cs *consent) ([]entry, []string, error) {
	var doc struct {
		MCPServers map[string]any           `json:"mcpServers"`
		Projects   map[string]claudeProject `json:"projects"`
	}
	if err := jsonc.Decode(c.path, data, true, &doc); err != nil {
		return nil, nil, fileError(c.path, err)
	}
	if cs != nil {
		cs.claude = map[string]claudeProject{}
		for dir, p := range doc.Projects {
			cs.claude[cleanDir(dir)] = p
		}
	}
	entries := serverEntries(doc.MCPServers, []string{"mcpServers"}, ScopeUser, filepath.Dir(c.path), identity)
	projects := make([]string, 0, len(doc.Projects))
	for dir := range doc.Projects {
		projects = append(projects, dir)
	}
	sort.Strings(projects)
	for _, dir := range projects {
		key := []string{"projects", dir, "mcpServers"}
		entries = append(entries, serverEntries(doc.Projects[dir].MCPServers, key, ScopeLocal, dir, identity)...)
	}
	return entries, projects, nil
}

// windsurfSpec: Windsurf names a remote server's URL serverUrl (and
// accepts url); its ${env:VAR} is mcpwatch's too.
func windsurfSpec(spec map[string]any) map[string]any {
	out := copyKeys(spec, "command", "args", "env", "headers", "url", "type")
	if u, ok := spec["serverUrl"]; ok {
		out["url"] = u
	}
	return out
}

// geminiEntries reads Gemini CLI's settings.json: mcpServers, less the
// servers its "mcp" settings exclude (excluded, or not in a non-empty
// allowed).
func geminiEntries(c candidate, top map[string]any) []entry {
	all := objectEntries(c, top, geminiSpec, "mcpServers")
	mcp, _ := top["mcp"].(map[string]any)
	allowed, hasAllowed := stringList(mcp["allowed"])
	excluded, _ := stringList(mcp["excluded"])
	out := all[:0]
	for _, e := range all {
		if contains(excluded, e.name) || hasAllowed && len(allowed) > 0 && !contains(allowed, e.name) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// geminiSpec: httpUrl is a streamable HTTP server, url an SSE one (unless
// "type" says otherwise); $VAR in a string is a reference.
func geminiSpec(spec map[string]any) map[string]any {
	out := copyKeys(spec, "command", "args", "env", "cwd", "headers")
	switch {
	case spec["httpUrl"] != nil:
		out["url"], out["type"] = spec["httpUrl"], "http"
	case spec["url"] != nil:
		out["url"], out["type"] = spec["url"], "sse"
		if t, ok := spec["type"].(string); ok {
			out["type"] = t
		}
	}
	return mapStrings(out, geminiRefs)
}

// bareRef matches what Gemini CLI expands and mcpwatch reads otherwise:
// $NAME without braces, and a "$" that starts no reference.
var bareRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$`) })

// geminiRefs rewrites $NAME as ${NAME}, keeps ${...}, and escapes any other
// "$" (mcpwatch would read "$$" as one).
func geminiRefs(s string) string {
	return bareRef().ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "${"):
			return m
		case len(m) > 1:
			return "${" + m[1:] + "}"
		}
		return "$$"
	})
}

// codexServer is one [mcp_servers.NAME] table of Codex's config.toml.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	EnvVars           []string          `toml:"env_vars"`
	Cwd               string            `toml:"cwd"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	Enabled           *bool             `toml:"enabled"`
}

// parseCodex reads Codex's config.toml. Codex expands no reference: its
// values are literal, and it names the variables that hold secrets instead
// (env_vars, bearer_token_env_var, env_http_headers).
func parseCodex(c candidate, data []byte, cs *consent) ([]entry, error) {
	var doc struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
		Projects   map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, tomlError(c.path, err)
	}
	if cs != nil {
		cs.codex = map[string]string{}
		for dir, p := range doc.Projects {
			if p.TrustLevel != "" {
				cs.codex[cleanDir(dir)] = p.TrustLevel
			}
		}
	}
	project := c.project
	if project == "" {
		project = ProjectDir(c.path)
	}
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []entry
	for _, name := range names {
		s := doc.MCPServers[name]
		if s.Enabled != nil && !*s.Enabled {
			continue
		}
		spec := map[string]any{}
		if s.Command != "" {
			spec["command"] = literal(s.Command)
		}
		if len(s.Args) > 0 {
			args := make([]any, len(s.Args))
			for i, a := range s.Args {
				args[i] = literal(a)
			}
			spec["args"] = args
		}
		env := map[string]any{}
		for k, v := range s.Env {
			env[k] = literal(v)
		}
		for _, k := range s.EnvVars {
			env[k] = "${" + k + "}"
		}
		if len(env) > 0 {
			spec["env"] = env
		}
		if s.Cwd != "" {
			spec["cwd"] = literal(s.Cwd)
		}
		if s.URL != "" {
			spec["url"], spec["type"] = literal(s.URL), "http" // Codex speaks streamable HTTP only
		}
		headers := map[string]any{}
		for k, v := range s.HTTPHeaders {
			headers[k] = literal(v)
		}
		for k, v := range s.EnvHTTPHeaders {
			headers[k] = "${" + v + "}"
		}
		if s.BearerTokenEnvVar != "" {
			headers["Authorization"] = "Bearer ${" + s.BearerTokenEnvVar + "}"
		}
		if len(headers) > 0 {
			spec["headers"] = headers
		}
		out = append(out, entry{name: name, key: []string{"mcp_servers", name}, scope: c.scope, project: project, spec: spec})
	}
	return out, nil
}

// literal escapes a value that its client does not expand, so mcpwatch
// does not either.
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// tomlError places a TOML problem at FILE:LINE:COL without quoting the
// file (the parser's message may hold a value, and values hold tokens).
func tomlError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		problem := "not valid TOML"
		if pe.LastKey != "" {
			problem = fmt.Sprintf("not valid TOML, or a value of the wrong type, at key %s", pe.LastKey)
		}
		return &jsonc.Error{File: file, Line: pe.Position.Line, Col: pe.Position.Col, Problem: problem + "; fix the file as Codex would read it"}
	}
	// A type mismatch names the line, the key and the two types, and no
	// value.
	if m := tomlTypeError().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &jsonc.Error{File: file, Line: line, Col: 1,
			Problem: fmt.Sprintf("%s: the wrong type (%s); fix the file as Codex would read it", m[2], tomlTypes.Replace(m[3]))}
	}
	return &jsonc.Error{File: file, Problem: "not valid TOML; fix the file as Codex would read it"}
}

var tomlTypes = strings.NewReplacer("destination has type slice", "Codex expects a list",
	"destination has type map", "Codex expects a table", "destination has type", "Codex expects a")

var tomlTypeError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): incompatible types: ([A-Za-z ;]*)$`)
})

// fileError words an empty file as the client would see it.
func fileError(file string, err error) error {
	if errors.Is(err, jsonc.ErrEmpty) {
		return &jsonc.Error{File: file, Problem: `is empty; it needs a JSON object such as {"mcpServers": {...}}`}
	}
	return err
}

// jsonKind names the kind of a decoded JSON value, as config errors do.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "a list"
	}
	return "nothing"
}

func copyKeys(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// mapStrings applies f to every string in v, in lists and objects too.
func mapStrings(m map[string]any, f func(string) string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = mapValue(v, f)
	}
	return out
}

func mapValue(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = mapValue(x, f)
		}
		return out
	case map[string]any:
		return mapStrings(v, f)
	}
	return v
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

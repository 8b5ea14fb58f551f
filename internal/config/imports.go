package config

// Client config files, read as the agents read them:
//
//	Claude Code .mcp.json, Claude Desktop claude_desktop_config.json, Cursor
//	.cursor/mcp.json:
//	  {"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}}}}
//	  {"mcpServers": {"NAME": {"type": "http"|"sse", "url": "...", "headers": {...}}}}
//	  (Cursor may give a url with no type: the transport is then detected.)
//	VS Code .vscode/mcp.json (JSON with comments and trailing commas, as
//	VS Code and Cursor read their files; Claude Code and Claude Desktop read
//	strict JSON, so a comment or a trailing comma there is an error naming
//	FILE:LINE:COL, since the client would not start any server of it):
//	  {"inputs": [{"id": "api-key", ...}],
//	   "servers": {"NAME": {"type": "stdio", "command": ..., ...} | {"type": "http", "url": ..., ...}}}
//	  and a settings.json holding the same under "mcp".
//
// Keys mcpwatch does not use are ignored (clients add their own), unless a
// server's key is a near miss of one it uses ("comand"): that is an error
// with a did-you-mean, since the client would miss the key too. A key it
// uses with the wrong type,
// a server that is both or neither a command and a url, an unknown type, or
// a file that is not JSON is an error naming the file and the key. A server
// with "disabled": true is not watched, as the client does not start it.
// Paths in a file under .vscode/ or .cursor/ start at the project folder
// above it (the folder the client runs servers in); others at the file's
// directory. ${input:ID} is never prompted for: see Expand.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/probe"
)

// LoadClientConfig reads the servers of an MCP client config file, with the
// built-in defaults.
func LoadClientConfig(path string) ([]Server, error) {
	return loadClientConfig(path, BuiltinDefaults(), nil)
}

func loadClientConfig(path string, def Defaults, inputs map[string]input) ([]Server, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("client config %s: %w", path, err)
	}
	data, err := os.ReadFile(abs) //nolint:gosec // G304: the client configuration file the operator named
	if err != nil {
		return nil, fmt.Errorf("read client config: %w", err)
	}
	var top map[string]any
	clean, extras := stripJSONC(data)
	if len(bytes.TrimSpace(clean)) == 0 {
		return nil, &FieldError{File: abs, Problem: "is empty; it needs a JSON object such as {\"mcpServers\": {...}}"}
	}
	if err := json.Unmarshal(clean, &top); err != nil {
		return nil, jsonError(abs, err, data)
	}
	if len(extras) > 0 && !readsJSONC(abs) {
		var errs []error
		for _, x := range extras {
			line, col := lineCol(data, int64(x.offset)+1)
			errs = append(errs, &FieldError{File: abs, Line: line, Col: col, Problem: x.problem()})
		}
		return nil, errors.Join(errs...)
	}

	d := &decoder{file: abs}
	if list, ok := top["servers"].([]any); ok { // mcp-probe.config.json: see mcpprobe.go
		servers := loadMcpProbe(d, list, filepath.Dir(abs), def)
		for i := range servers {
			servers[i].inputs = inputs
		}
		return servers, d.err()
	}
	root, _ := d.object("", top, false)
	prefix := ""
	var servers *object
	switch {
	case root.m["mcpServers"] != nil:
		prefix = "mcpServers"
		servers, _ = root.sub("mcpServers", false)
	case root.m["servers"] != nil:
		prefix = "servers"
		servers, _ = root.sub("servers", false)
	case root.m["mcp"] != nil:
		if mcp, ok := root.sub("mcp", false); ok && mcp.m["servers"] != nil {
			prefix = "mcp.servers"
			servers, _ = mcp.sub("servers", false)
		}
	}
	if prefix == "" {
		hint := "is it a Claude Code, Claude Desktop, Cursor or VS Code MCP config?"
		for _, k := range root.keys() {
			if near := closest(k, []string{"mcpServers", "servers"}); near != "" {
				hint = fmt.Sprintf("%q: did you mean %s?", k, near)
				break
			}
		}
		return nil, &FieldError{File: abs, Problem: "holds no mcpServers or servers; " + hint}
	}
	if servers == nil {
		return nil, d.err()
	}

	project := projectDir(abs)
	var out []Server
	for _, name := range servers.keys() {
		s, ok, skip := decodeClientServer(d, joinKey(prefix, name), name, servers.m[name], project)
		if !ok || skip {
			continue
		}
		s.Timeout, s.Schedule, s.Era = def.Timeout, def.Schedule, def.Era
		s.InheritEnv = s.InheritEnv || def.InheritEnv && s.Command != ""
		s.inputs = inputs
		out = append(out, s)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeClientServer reads one server of a client config. skip is true for
// a disabled server.
func decodeClientServer(d *decoder, prefix, name string, v any, project string) (s Server, ok, skip bool) {
	o, ok := d.object(prefix, v, false)
	if !ok {
		return Server{}, false, false
	}
	if disabled, _ := o.boolean("disabled"); disabled {
		return Server{}, true, true
	}
	nerr := len(d.errs)
	s = Server{Name: name, Source: d.file, baseDir: project, workspace: project}
	s.Command, _ = o.string("command")
	s.Args, _ = o.strings("args")
	s.Env, _ = o.stringMap("env")
	s.EnvFile, _ = o.string("envFile")
	cwd, hasCwd := o.string("cwd")
	s.URL, _ = o.string("url")
	s.Headers, _ = o.stringMap("headers")
	typ, hasType := o.string("type")
	nearMisses(o)

	switch {
	case hasType && typ == "stdio":
		s.Transport = probe.TransportStdio // with a url, checkServer reports it
	case hasType:
		t, known := parseTransport(typ)
		if !known || t == probe.TransportAuto {
			d.errorf(o.key("type"), "%q is not a server type mcpwatch can probe; use stdio, http or sse", typ)
		}
		s.Transport = t
		if s.URL == "" && s.Command == "" {
			break // checkServer reports it
		}
		if s.URL == "" {
			d.errorf(o.key("type"), "is %s but the server has no url; add one, or use stdio for a command", typ)
		}
	case s.URL != "":
		s.Transport = probe.TransportAuto
	default:
		s.Transport = probe.TransportStdio
	}
	checkServer(d, &s, serverKeys{prefix: prefix, transport: "type", caFile: joinKey(prefix, "ca_file")})

	if s.Command != "" && s.URL == "" {
		s.Command = resolveCommand(s.Command, project)
		s.EnvFile = resolveServerPath(s.EnvFile, project)
		s.Dir = project
		if hasCwd {
			s.Dir = resolveServerPath(cwd, project)
		}
	}
	return s, len(d.errs) == nerr, false
}

// otherClientKeys are server keys that some client uses and mcpwatch does
// not, yet close enough to one it does to pass for a misspelling.
var otherClientKeys = []string{
	"dev", // VS Code: watch and debug settings of a server under development
}

// nearMisses reports each key of a client config's server that mcpwatch
// does not use but that is within a typo of one it does: "comand" would
// leave the server without a command, "evn" without its credential.
func nearMisses(o *object) {
	for _, k := range o.keys() {
		if contains(o.known, k) || contains(otherClientKeys, k) {
			continue
		}
		if near := closest(k, o.known); near != "" {
			known := append([]string(nil), o.known...)
			sort.Strings(known)
			o.d.errorf(o.key(k), "unknown key; did you mean %s? (known keys here: %s)", near, strings.Join(known, ", "))
		}
	}
}

// readsJSONC reports whether the client that reads a file accepts comments
// and trailing commas: VS Code (and Cursor, built on it) for its files
// under .vscode/ or .cursor/ and its settings.json.
func readsJSONC(file string) bool {
	switch filepath.Base(filepath.Dir(file)) {
	case ".vscode", ".cursor":
		return true
	}
	return filepath.Base(file) == "settings.json"
}

// projectDir is where a client runs a server from: the project folder for a
// file under .vscode/ or .cursor/, else the file's own directory.
func projectDir(file string) string {
	dir := filepath.Dir(file)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		return filepath.Dir(dir)
	}
	return dir
}

// jsoncExtra is a comment or a trailing comma: JSON with comments has
// them, strict JSON does not.
type jsoncExtra struct {
	offset  int // of its first byte
	comment bool
	closer  byte // for a trailing comma: the } or ] after it
}

func (x jsoncExtra) problem() string {
	if x.comment {
		return "a comment, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove it"
	}
	return fmt.Sprintf("a trailing comma before %c, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove the comma", x.closer)
}

// stripJSONC blanks out comments and trailing commas (VS Code writes both)
// with spaces, so byte offsets in a syntax error still match the file, and
// lists where they were.
func stripJSONC(data []byte) ([]byte, []jsoncExtra) {
	var extras []jsoncExtra
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			extras = append(extras, jsoncExtra{offset: i, comment: true})
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			extras = append(extras, jsoncExtra{offset: i, comment: true})
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		case c == ',':
			if closer := nextCloser(out[i+1:]); closer != 0 {
				extras = append(extras, jsoncExtra{offset: i, closer: closer})
				out[i] = ' '
			}
		}
	}
	return out, extras
}

// nextCloser returns the next token, skipping spaces and comments, when it
// is "}" or "]"; else 0.
func nextCloser(b []byte) byte {
	for len(b) > 0 {
		switch {
		case isJSONSpace(b[0]):
			b = b[1:]
		case bytes.HasPrefix(b, []byte("//")):
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				return 0
			}
			b = b[nl:]
		case bytes.HasPrefix(b, []byte("/*")):
			end := bytes.Index(b[2:], []byte("*/"))
			if end < 0 {
				return 0
			}
			b = b[2+end+2:]
		case b[0] == '}' || b[0] == ']':
			return b[0]
		default:
			return 0
		}
	}
	return 0
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonError places a JSON error at FILE:LINE:COL, and never quotes the
// file's content: a client config holds tokens.
func jsonError(file string, err error, data []byte) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return &FieldError{File: file, Line: line, Col: col, Problem: "not valid JSON: " + syntaxProblem(syn)}
	case errors.As(err, &typ):
		return &FieldError{File: file, Problem: "the top level must be a JSON object such as {\"mcpServers\": {...}}"}
	}
	return &FieldError{File: file, Problem: "not valid JSON"}
}

// syntaxProblem keeps the kind of a JSON syntax error and drops the
// character it quotes.
func syntaxProblem(e *json.SyntaxError) string {
	msg := e.Error()
	rest, ok := strings.CutPrefix(msg, "invalid character '")
	if !ok {
		return msg
	}
	if i := strings.Index(rest[1:], "' "); i >= 0 {
		return "invalid character " + rest[1+i+2:]
	}
	return "invalid character"
}

func lineCol(data []byte, offset int64) (line, col int) {
	// Offset counts the bytes read, the offending one included.
	offset--
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	line = 1 + bytes.Count(data[:offset], []byte("\n"))
	col = int(offset) - bytes.LastIndexByte(data[:offset], '\n')
	return line, col
}

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
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/jsonc"
	"github.com/mcpwatch/mcpwatch/internal/util/suggest"
)

// loadClientConfig reads the servers of an MCP client config file through
// src (Sources.ClientFile: the decoder host discovery reads the same files
// with, so a file means one thing however it is named). What they leave
// unset, Normalize sets.
func loadClientConfig(src Sources, path string, inputs map[string]expand.Input) ([]Server, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("client config %s: %w", path, err)
	}
	if src == nil {
		return nil, &FieldError{File: abs, Problem: noSourcesProblem}
	}
	parsed, err := src.ClientFile(abs)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("read client config: %w", err)
	case err != nil:
		return nil, clientJSONError(abs, err)
	}

	d := &decoder{file: abs}
	if parsed.ServerList != nil { // mcp-probe.config.json: see mcpprobe.go
		servers := loadMcpProbe(d, parsed.ServerList, filepath.Dir(abs))
		for i := range servers {
			servers[i].Inputs = inputs
		}
		return servers, d.err()
	}
	if parsed.NoServers {
		hint := "is it a Claude Code, Claude Desktop, Cursor or VS Code MCP config?"
		for _, k := range parsed.Keys {
			if near := suggest.Closest(k, []string{"mcpServers", "servers"}); near != "" {
				hint = fmt.Sprintf("%q: did you mean %s?", k, near)
				break
			}
		}
		return nil, &FieldError{File: abs, Problem: "holds no mcpServers or servers; " + hint}
	}
	var out []Server
	for _, e := range parsed.Entries {
		if s, ok := clientServer(d, e.Key, e.Name, e.Spec, e.Project, inputs); ok {
			out = append(out, s)
		}
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// clientServer reads one server of a client config (Normalize applies the
// defaults); ok is false for a server in error or disabled.
func clientServer(d *decoder, key, name string, v any, project string, inputs map[string]expand.Input) (Server, bool) {
	s, ok, skip := decodeClientServer(d, key, name, v, project)
	if !ok || skip {
		return Server{}, false
	}
	s.Inputs = inputs
	return s, true
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
	s = Server{Name: name, Source: d.file, BaseDir: project, Workspace: project}
	var w written
	s.Command, _ = o.string("command")
	readShared(o, &s)
	s.EnvFile, _ = o.string("envFile")
	w.cwd, w.hasCwd = o.string("cwd")
	s.URL, _ = o.string("url")
	w.transport, w.hasTransport = o.string("type")
	nearMisses(o)

	clientDialect.setTransport(d, prefix, &s, w)
	clientDialect.finish(d, prefix, &s, w, project)
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
		if slices.Contains(o.known, k) || slices.Contains(otherClientKeys, k) {
			continue
		}
		if near := suggest.Closest(k, o.known); near != "" {
			known := append([]string(nil), o.known...)
			sort.Strings(known)
			o.d.errorf(o.key(k), "unknown key; did you mean %s? (known keys here: %s)", near, strings.Join(known, ", "))
		}
	}
}

// clientJSONError words a client config's JSON problems as FieldErrors.
func clientJSONError(file string, err error) error {
	if errors.Is(err, jsonc.ErrEmpty) {
		return &FieldError{File: file, Problem: "is empty; it needs a JSON object such as {\"mcpServers\": {...}}"}
	}
	var errs []error
	for _, e := range unjoin(err) {
		if je := (*jsonc.Error)(nil); errors.As(e, &je) {
			e = &FieldError{File: je.File, Line: je.Line, Col: je.Col, Problem: je.Problem}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

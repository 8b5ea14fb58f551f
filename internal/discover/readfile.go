package discover

// One client config file, named by the user (an import of mcpwatch.yml, a
// --config.file): read by the same decoder discovery reads the host's files
// with, so a file means one thing however it reaches mcpwatch (Gemini CLI's
// httpUrl and $VAR, Windsurf's serverUrl and comments, Codex's TOML).

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/jsonc"
)

// Parsed is a client config file, decoded.
type Parsed struct {
	Client  Client   // the client that reads it; "" when its path names none
	Origins []Origin // its servers in the common shape, disabled ones left out
	// NoServers is true when the file holds none of the keys its client
	// keeps servers under; Keys are then its top-level keys, for a hint.
	NoServers bool
	Keys      []string
	// ServerList is a top-level "servers" list: the Python preflight's
	// mcp-probe format, which is no client's; the caller reads it.
	ServerList []any
}

// ClientOf is the client whose file path is, by its name and folder: the
// paths the clients document (paths.go). "" for any other file, which is
// read as strict JSON holding mcpServers, servers or mcp.servers.
func ClientOf(path string) Client {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case strings.EqualFold(filepath.Ext(base), ".toml"):
		return Codex
	case dir == ".gemini" && base == "settings.json":
		return Gemini
	case base == "mcp_config.json" && dir == "windsurf":
		return Windsurf
	case dir == ".cursor":
		return Cursor
	case dir == ".vscode", base == "settings.json",
		// the user's mcp.json, and each profile's
		base == "mcp.json" && (dir == "User" || filepath.Base(filepath.Dir(filepath.Dir(path))) == "profiles"):
		return VSCode
	case base == "claude_desktop_config.json":
		return ClaudeDesktop
	case base == ".mcp.json":
		return ClaudeCode
	}
	return ""
}

// formatOf is how client's file at path is read.
func formatOf(client Client, path string) format {
	switch client {
	case VSCode:
		if filepath.Base(path) == "settings.json" {
			return formatVSCodeSettings
		}
		return formatVSCode
	case Windsurf:
		return formatWindsurf
	case Codex:
		return formatCodex
	case Gemini:
		return formatGemini
	case "":
		return formatAuto
	}
	return formatMCPServers
}

// ProjectDir is where a client runs a file's servers: the project folder
// for a file in a client's folder of it (.vscode/, .cursor/, .codex/,
// .gemini/), else the file's own folder.
func ProjectDir(file string) string {
	dir := filepath.Dir(file)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor", ".codex", ".gemini":
		return filepath.Dir(dir)
	}
	return dir
}

// ReadFile reads the client config file at path as client reads it (""
// for the client its path names: ClientOf), bounded as discovery's reads
// are (MaxFileBytes). An error reading the file is the reader's (an
// fs.PathError for a missing one); an error in it names FILE:LINE:COL and
// quotes nothing of it.
func ReadFile(path string, client Client) (Parsed, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Parsed{}, err
	}
	data, err := readBounded(abs)
	if err != nil {
		return Parsed{}, err
	}
	if client == "" {
		client = ClientOf(abs)
	}
	c := candidate{client: client, path: abs, project: ProjectDir(abs), format: formatOf(client, abs)}
	p := Parsed{Client: client}
	var entries []entry
	if c.format == formatCodex {
		entries, err = parseCodex(c, data, nil)
	} else {
		var top map[string]any
		top, err = jsonc.Object(abs, data, strictJSON(client))
		if err != nil {
			return Parsed{}, fileError(abs, err)
		}
		switch c.format {
		case formatMCPServers, formatVSCode, formatVSCodeSettings, formatAuto:
			// The plain shapes: a file that keeps its servers under
			// another of their keys (a .mcp.json with "servers") is read
			// by that key, and a "servers" list is mcp-probe's.
			if list, ok := top["servers"].([]any); ok {
				p.ServerList = list
				return p, nil
			}
			if c.format == formatAuto || !has(top, serversKey(c.format)...) {
				c.format = autoFormat(top)
			}
		}
		key := serversKey(c.format)
		if !has(top, key...) {
			p.NoServers = true
			for k := range top {
				p.Keys = append(p.Keys, k)
			}
			sort.Strings(p.Keys)
			return p, nil
		}
		entries, err = parseJSON(c, top)
	}
	if err != nil {
		return Parsed{}, err
	}
	for _, e := range entries {
		p.Origins = append(p.Origins, Origin{Client: client, File: abs, Key: e.key, Name: e.name, Project: e.project, Spec: e.spec})
	}
	return p, nil
}

// strictJSON is whether client reads strict JSON: Claude Code and Claude
// Desktop do, and so does mcpwatch for a file no client's path names; VS
// Code, Cursor, Windsurf and Gemini CLI accept comments and trailing
// commas.
func strictJSON(c Client) bool { return c == ClaudeCode || c == ClaudeDesktop || c == "" }

// autoFormat reads a file no client's path names by the key it keeps
// servers under.
func autoFormat(top map[string]any) format {
	switch {
	case top["mcpServers"] != nil:
		return formatMCPServers
	case top["servers"] != nil:
		return formatVSCode
	case top["mcp"] != nil:
		return formatVSCodeSettings
	}
	return formatMCPServers
}

// serversKey is the path of keys format keeps servers under.
func serversKey(f format) []string {
	switch f {
	case formatVSCode:
		return []string{"servers"}
	case formatVSCodeSettings:
		return []string{"mcp", "servers"}
	}
	return []string{"mcpServers"}
}

func has(top map[string]any, key ...string) bool {
	var v any = top
	for _, k := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

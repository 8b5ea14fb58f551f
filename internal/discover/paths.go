package discover

// Where each client keeps its MCP servers, per OS, as its own documentation
// says (docs/discover.md lists the sources). Nothing else is read: no
// directory is walked, no other file is opened; the one listing is VS Code's
// profiles folder, whose children each hold a profile's own mcp.json.

import (
	"path/filepath"
	"slices"
	"strings"
)

// Client is an MCP client (an agent or an editor) whose configuration
// discovery reads.
type Client string

// The clients discovery knows, in the order their files are read (and so
// the order that decides which definition of a server is shown first).
const (
	ClaudeCode    Client = "claude-code"
	ClaudeDesktop Client = "claude-desktop"
	Cursor        Client = "cursor"
	VSCode        Client = "vscode"
	Windsurf      Client = "windsurf"
	Codex         Client = "codex"
	Gemini        Client = "gemini"
)

// Clients are every client discovery knows, in reading order.
func Clients() []Client {
	return []Client{ClaudeCode, ClaudeDesktop, Cursor, VSCode, Windsurf, Codex, Gemini}
}

// ParseClient reads a client's name as Clients spells it.
func ParseClient(s string) (Client, bool) {
	c := Client(strings.ToLower(strings.TrimSpace(s)))
	return c, slices.Contains(Clients(), c)
}

// Scope is where a definition applies, in the clients' own words: user
// (every project of this user), project (a file in the project, usually
// committed), local (Claude Code: this user in one project, kept in
// ~/.claude.json).
type Scope string

// Scopes.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
)

// format is how a file is read.
type format int

const (
	formatClaudeCode     format = iota // ~/.claude.json: mcpServers, and projects.<dir>.mcpServers
	formatMCPServers                   // {"mcpServers": {...}}: Claude Code .mcp.json, Claude Desktop, Cursor
	formatVSCode                       // {"servers": {...}}: VS Code mcp.json
	formatVSCodeSettings               // {"mcp": {"servers": {...}}}: VS Code settings.json (may hold none)
	formatWindsurf                     // {"mcpServers": {...}} with serverUrl
	formatCodex                        // TOML [mcp_servers.NAME]
	formatGemini                       // {"mcpServers": {...}} with httpUrl, $VAR
	formatAuto                         // a file no client's path names: by the key that holds its servers
)

// candidate is one file a client may keep servers in.
type candidate struct {
	client  Client
	scope   Scope
	path    string
	project string // the project folder, for a project-scope file
	format  format
	// profiles: the file's name in each child of this folder is a file of
	// its own (VS Code's profiles); "" for none.
	profiles string
}

// userCandidates are the user-scope files of every client on h's OS.
func (h Host) userCandidates() []candidate {
	home := h.Home
	// The folder the desktop apps (Claude Desktop, VS Code) keep their
	// per-user settings in.
	var appConfig string
	switch h.OS {
	case "darwin":
		appConfig = filepath.Join(home, "Library", "Application Support")
	case "windows":
		appConfig = h.AppData
	default:
		appConfig = h.ConfigHome
	}
	codexHome := h.CodexHome
	if codexHome == "" {
		codexHome = filepath.Join(home, ".codex")
	}
	var out []candidate
	add := func(c Client, path string, f format) {
		out = append(out, candidate{client: c, scope: ScopeUser, path: path, format: f})
	}
	add(ClaudeCode, filepath.Join(home, ".claude.json"), formatClaudeCode)
	if appConfig != "" {
		add(ClaudeDesktop, filepath.Join(appConfig, "Claude", "claude_desktop_config.json"), formatMCPServers)
	}
	add(Cursor, filepath.Join(home, ".cursor", "mcp.json"), formatMCPServers)
	if appConfig != "" {
		for _, product := range []string{"Code", "Code - Insiders"} {
			user := filepath.Join(appConfig, product, "User")
			add(VSCode, filepath.Join(user, "mcp.json"), formatVSCode)
			add(VSCode, filepath.Join(user, "settings.json"), formatVSCodeSettings)
			out = append(out, candidate{client: VSCode, scope: ScopeUser, path: filepath.Join(user, "profiles"),
				format: formatVSCode, profiles: "mcp.json"})
		}
	}
	add(Windsurf, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"), formatWindsurf)
	add(Codex, filepath.Join(codexHome, "config.toml"), formatCodex)
	add(Gemini, filepath.Join(home, ".gemini", "settings.json"), formatGemini)
	return out
}

// projectCandidates are the project-scope files of every client in dir.
func projectCandidates(dir string) []candidate {
	var out []candidate
	add := func(c Client, rel string, f format) {
		out = append(out, candidate{client: c, scope: ScopeProject, path: filepath.Join(dir, rel), project: dir, format: f})
	}
	add(ClaudeCode, ".mcp.json", formatMCPServers)
	add(Cursor, filepath.Join(".cursor", "mcp.json"), formatMCPServers)
	add(VSCode, filepath.Join(".vscode", "mcp.json"), formatVSCode)
	add(Codex, filepath.Join(".codex", "config.toml"), formatCodex)
	add(Gemini, filepath.Join(".gemini", "settings.json"), formatGemini)
	return out
}

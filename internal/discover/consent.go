package discover

// Whether a project-scope server may be run: a project folder's files come
// with the folder (a cloned repository brings its .mcp.json, .codex/,
// .vscode/, .gemini/ and .cursor/ along), so each client asks its user
// before running what they define, and records the answer in the user's own
// files. Discovery honours those answers, and reads them only from the
// user's files, never from the project (a repository could write its own
// consent):
//
//   - Claude Code (~/.claude.json, projects.<folder>): hasTrustDialogAccepted,
//     enableAllProjectMcpServers, enabledMcpjsonServers and
//     disabledMcpjsonServers, for the servers of the folder's .mcp.json;
//   - Codex (~/.codex/config.toml, [projects."<folder>"]): trust_level;
//   - Gemini CLI (~/.gemini/trustedFolders.json): TRUST_FOLDER, TRUST_PARENT
//     and DO_NOT_TRUST;
//   - VS Code and Cursor keep workspace trust in a database, not in a file
//     discovery reads: nothing is recorded for them.
//
// A folder the user named (mcpwatch.yml's own, projects:, --project) is
// imported unless its client recorded a refusal; a folder only Claude Code
// recorded (another repository the user once opened) is not imported at
// all: naming it is the consent.

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// claudeProject is what Claude Code records of a project folder.
type claudeProject struct {
	MCPServers             map[string]any `json:"mcpServers"`
	HasTrustDialogAccepted *bool          `json:"hasTrustDialogAccepted"`
	EnableAll              *bool          `json:"enableAllProjectMcpServers"`
	Enabled                []string       `json:"enabledMcpjsonServers"`
	Disabled               []string       `json:"disabledMcpjsonServers"`
}

// consent is what the user's own files record of project folders, by the
// folder as each file spells it. A folder may be recorded under several
// spellings (through a symlink, in another case), and a project named
// under yet another: folders compares them as the file system does.
type consent struct {
	claude  map[string]claudeProject // by folder, cleaned
	codex   map[string]string        // trust_level by folder, cleaned
	gemini  map[string]string        // trustedFolders.json: folder -> rule
	folders *folders
}

func cleanDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Clean(dir)
}

// notNamed is why a folder the user did not name is left out.
const notNamed = "the project scope of a folder mcpwatch was not pointed at (Claude Code recorded it); " +
	"name the folder under projects: (or --project) to import it"

// leftOut says why a project-scope definition is not run, or "" when it
// may be. named is whether the user named its folder. Every record of the
// folder counts, whatever its spelling: one refusal among them refuses.
func (c consent) leftOut(o Origin, named bool) string {
	if o.Scope != ScopeProject {
		return "" // the user's own files: written by the user
	}
	if !named {
		return notNamed
	}
	dir := cleanDir(o.Project)
	switch o.Client {
	case ClaudeCode:
		for _, recorded := range slices.Sorted(maps.Keys(c.claude)) {
			if !c.folders.same(recorded, dir) {
				continue
			}
			if why := claudeRefusal(c.claude[recorded], o.Name); why != "" {
				return why
			}
		}
	case Codex:
		for _, recorded := range slices.Sorted(maps.Keys(c.codex)) {
			if lvl := c.codex[recorded]; lvl != "trusted" && c.folders.same(recorded, dir) {
				return "Codex: the project is not trusted (trust_level = " + quote(lvl) + " in ~/.codex/config.toml)"
			}
		}
	case Gemini:
		if c.geminiTrust(dir) == "DO_NOT_TRUST" {
			return "Gemini CLI: the folder is not trusted (DO_NOT_TRUST in ~/.gemini/trustedFolders.json)"
		}
	}
	return ""
}

// claudeRefusal is why Claude Code's record p of a folder keeps its
// server name from running, or "".
func claudeRefusal(p claudeProject, name string) string {
	switch {
	case slices.Contains(p.Disabled, name):
		return "Claude Code: disabled for this project (disabledMcpjsonServers in ~/.claude.json)"
	case p.HasTrustDialogAccepted != nil && !*p.HasTrustDialogAccepted:
		return "Claude Code: the folder's trust dialog was not accepted (hasTrustDialogAccepted in ~/.claude.json)"
	case p.EnableAll != nil && *p.EnableAll, slices.Contains(p.Enabled, name):
		return ""
	case p.EnableAll != nil || len(p.Enabled) > 0 || len(p.Disabled) > 0:
		return "Claude Code: not approved for this project (not in enabledMcpjsonServers of ~/.claude.json)"
	}
	return ""
}

// geminiTrust is Gemini CLI's answer for dir: a folder within one marked
// TRUST_FOLDER (or within the parent of one marked TRUST_PARENT) is
// trusted, whatever else is marked; else a folder marked DO_NOT_TRUST,
// under any spelling, is not; else "" (nothing recorded).
func (c consent) geminiTrust(dir string) string {
	for _, p := range slices.Sorted(maps.Keys(c.gemini)) {
		root := cleanDir(p)
		switch strings.ToUpper(c.gemini[p]) {
		case "TRUST_PARENT":
			root = filepath.Dir(root)
		case "TRUST_FOLDER":
		default:
			continue
		}
		if c.folders.within(dir, root) {
			return "TRUST_FOLDER"
		}
	}
	for _, p := range slices.Sorted(maps.Keys(c.gemini)) {
		if strings.ToUpper(c.gemini[p]) == "DO_NOT_TRUST" && c.folders.same(p, dir) {
			return "DO_NOT_TRUST"
		}
	}
	return ""
}

// quote keeps a value read from a file on one line, short and printable.
func quote(s string) string { return strconv.Quote(sanitize.Truncate(s, 32)) }

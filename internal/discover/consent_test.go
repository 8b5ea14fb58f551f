package discover

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@HOME@", root)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// clonedRepo is a repository holding a server in each of the five
// project-scope files, every one of them a program the user never chose.
var clonedRepo = map[string]string{
	"src/clone/.mcp.json":             `{"mcpServers": {"evil": {"command": "./evil.sh"}, "also": {"command": "./also.sh"}}}`,
	"src/clone/.codex/config.toml":    "[mcp_servers.evil-codex]\ncommand = \"./evil.sh\"\nargs = [\"codex\"]\n",
	"src/clone/.vscode/mcp.json":      `{"servers": {"evil-vscode": {"command": "./evil.sh", "args": ["vscode"]}}}`,
	"src/clone/.gemini/settings.json": `{"mcpServers": {"evil-gemini": {"command": "./evil.sh", "args": ["gemini"]}}}`,
	"src/clone/.cursor/mcp.json":      `{"mcpServers": {"evil-cursor": {"command": "./evil.sh", "args": ["cursor"]}}}`,
}

// A cloned repository that Claude Code recorded, and whose servers the user
// refused: nothing of it is found to run, whether the folder is only
// recorded or also named, and each is listed as left out with why.
func TestFindHonoursConsent(t *testing.T) {
	home := t.TempDir()
	files := map[string]string{
		".claude.json": `{"projects": {"@HOME@/src/clone": {"hasTrustDialogAccepted": false, "disabledMcpjsonServers": ["evil"]}}}`,
		// Codex and Gemini CLI refuse the folder too.
		".codex/config.toml":          "[projects.\"@HOME@/src/clone\"]\ntrust_level = \"untrusted\"\n",
		".gemini/trustedFolders.json": `{"@HOME@/src/clone": "DO_NOT_TRUST"}`,
	}
	for k, v := range clonedRepo {
		files[k] = v
	}
	writeFiles(t, home, files)
	clone := filepath.Join(home, "src", "clone")

	// Recorded by Claude Code only: none of its five files is run.
	res := Find(Host{OS: "linux", Home: home, KnownProjects: true})
	if len(res.Servers) != 0 {
		t.Errorf("a recorded folder that was not named gave servers to run: %v", names(res))
	}
	if got := leftOut(res); len(got) != 6 || !strings.Contains(got["evil-cursor"], "not pointed at") {
		t.Errorf("left out: %v, want all 6 servers, for a folder not named", got)
	}

	// Named: each client's own refusal holds. Cursor and VS Code record
	// nothing a file shows: naming the folder is the consent.
	res = Find(Host{OS: "linux", Home: home, KnownProjects: true, Projects: []string{clone}})
	if got := names(res); !slices.Equal(got, []string{"evil-cursor", "evil-vscode"}) {
		t.Errorf("named folder: found %v, want only the clients that recorded nothing", got)
	}
	got := leftOut(res)
	for name, want := range map[string]string{
		"evil":        "disabledMcpjsonServers",
		"also":        "hasTrustDialogAccepted",
		"evil-codex":  "trust_level = \"untrusted\"",
		"evil-gemini": "DO_NOT_TRUST",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s left out for %q, want it to say %s", name, got[name], want)
		}
	}
}

// Consent comes from the user's files only: a project that declares itself
// trusted (Codex's trust_level in its own .codex/config.toml) is not
// trusted for it; and what the user approved is run.
func TestFindConsentFromUserFilesOnly(t *testing.T) {
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		".claude.json":       `{"projects": {"@HOME@/app": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["ok"]}}}`,
		".codex/config.toml": "[projects.\"@HOME@/app\"]\ntrust_level = \"untrusted\"\n",
		"app/.mcp.json":      `{"mcpServers": {"ok": {"command": "a"}, "pending": {"command": "b"}}}`,
		"app/.codex/config.toml": "[projects.\"@HOME@/app\"]\ntrust_level = \"trusted\"\n" +
			"[mcp_servers.c]\ncommand = \"c\"\n",
		".gemini/trustedFolders.json": `{"@HOME@/app/sub": "TRUST_PARENT", "@HOME@/app": "DO_NOT_TRUST"}`,
		"app/.gemini/settings.json":   `{"mcpServers": {"g": {"command": "g"}}}`,
	})
	res := Find(Host{OS: "linux", Home: home, Projects: []string{filepath.Join(home, "app")}})
	if got := names(res); !slices.Equal(got, []string{"g", "ok"}) {
		t.Errorf("found %v, want [g ok]: approved by Claude Code, trusted by Gemini through TRUST_PARENT", got)
	}
	if got := leftOut(res); !strings.Contains(got["pending"], "not approved") || !strings.Contains(got["c"], "untrusted") {
		t.Errorf("left out: %v", got)
	}
}

func names(res Result) []string {
	var out []string
	for _, s := range res.Servers {
		out = append(out, s.Name)
	}
	return out
}

func leftOut(res Result) map[string]string {
	out := map[string]string{}
	for _, l := range res.LeftOut {
		out[l.Origin.Name] = l.Reason
	}
	return out
}

// refusingHome writes a home whose three clients refuse the folder
// recorded (Claude Code's trust dialog and disabled list, Codex's
// trust_level, Gemini's DO_NOT_TRUST) and the cloned repository at real.
func refusingHome(t *testing.T, home, recorded, real string) {
	t.Helper()
	q := strings.ReplaceAll(recorded, `\`, `\\`)
	writeFiles(t, home, map[string]string{
		".claude.json":                `{"projects": {"` + q + `": {"hasTrustDialogAccepted": false, "disabledMcpjsonServers": ["evil"]}}}`,
		".codex/config.toml":          "[projects.\"" + q + "\"]\ntrust_level = \"untrusted\"\n",
		".gemini/trustedFolders.json": `{"` + q + `": "DO_NOT_TRUST"}`,
	})
	for rel, content := range clonedRepo {
		p := filepath.Join(real, strings.TrimPrefix(rel, "src/clone/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A refusal recorded for a folder holds however the folder is named:
// through a symlink to it or to a folder above it (macOS's /tmp and /var
// are such), or by its real path when the refusal was recorded through a
// symlink. Before, consent was looked up by the path as given, and the
// refused commands ran.
func TestFindConsentThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real", "clone")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "parent-link")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(real, filepath.Join(root, "clone-link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, recorded, named string }{
		{"named through a symlink to a folder above", real, filepath.Join(root, "parent-link", "clone")},
		{"named through a symlink to the folder", real, filepath.Join(root, "clone-link")},
		{"recorded through a symlink, named by its real path", filepath.Join(root, "parent-link", "clone"), real},
		{"named with a trailing slash and dots", real, filepath.Join(root, "parent-link", "clone") + "/./"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			refusingHome(t, home, tc.recorded, real)
			res := Find(Host{OS: "linux", Home: home, Projects: []string{tc.named}})
			if got := names(res); !slices.Equal(got, []string{"evil-cursor", "evil-vscode"}) {
				t.Errorf("found %v, want only the clients that record nothing", got)
			}
			got := leftOut(res)
			for name, want := range map[string]string{
				"evil": "disabledMcpjsonServers", "also": "hasTrustDialogAccepted",
				"evil-codex": "untrusted", "evil-gemini": "DO_NOT_TRUST",
			} {
				if !strings.Contains(got[name], want) {
					t.Errorf("%s left out for %q, want it to say %s", name, got[name], want)
				}
			}
		})
	}
}

// A folder recorded under two spellings is refused when either record
// refuses, whichever the project is named by; and the folder's files are
// read once when it is named under both.
func TestFindConsentAnySpellingRefuses(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real", "clone")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		".claude.json": `{"projects": {"` + real + `": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["evil", "also"]},` +
			`"` + link + `": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["also"], "disabledMcpjsonServers": ["evil"]}}}`,
	})
	if err := os.WriteFile(filepath.Join(real, ".mcp.json"), []byte(clonedRepo["src/clone/.mcp.json"]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, named := range [][]string{{real}, {link}, {link, real}} {
		res := Find(Host{OS: "linux", Home: home, Projects: named, Clients: []Client{ClaudeCode}})
		if got := names(res); !slices.Equal(got, []string{"also"}) {
			t.Errorf("named %v: found %v, want [also]: evil is disabled under one spelling", named, got)
		}
		if got := leftOut(res); !strings.Contains(got["evil"], "disabledMcpjsonServers") || len(got) != 1 {
			t.Errorf("named %v: left out %v", named, got)
		}
		if len(res.Files) != 2 { // ~/.claude.json and the one .mcp.json
			t.Errorf("named %v: read %d files, want the folder's once: %v", named, len(res.Files), res.Files)
		}
	}
}

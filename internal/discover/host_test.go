package discover

import (
	"path/filepath"
	"strings"
	"testing"
)

// The host mcpwatch runs on, from its environment: the home folder and
// the folders each OS keeps its apps' files in, with their defaults; no
// home is an error that names the variable.
func TestHostFromEnv(t *testing.T) {
	for _, tc := range []struct {
		os   string
		env  map[string]string
		want Host // OS, Home, AppData, ConfigHome, CodexHome
		err  string
	}{
		{"linux", map[string]string{"HOME": "/home/u"}, Host{Home: "/home/u", ConfigHome: filepath.Join("/home/u", ".config")}, ""},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "CODEX_HOME": "/codex"}, Host{Home: "/home/u", ConfigHome: "/cfg", CodexHome: "/codex"}, ""},
		{"windows", map[string]string{"USERPROFILE": `C:\Users\u`, "HOME": "/ignored"},
			Host{Home: `C:\Users\u`, ConfigHome: filepath.Join(`C:\Users\u`, ".config"), AppData: filepath.Join(`C:\Users\u`, "AppData", "Roaming")}, ""},
		{"windows", map[string]string{"USERPROFILE": `C:\Users\u`, "APPDATA": `D:\roaming`},
			Host{Home: `C:\Users\u`, ConfigHome: filepath.Join(`C:\Users\u`, ".config"), AppData: `D:\roaming`}, ""},
		{"darwin", map[string]string{}, Host{}, "cannot find the home folder: $HOME is not set"},
		{"windows", map[string]string{"HOME": "/home/u"}, Host{}, "cannot find the home folder"},
	} {
		h, err := HostFromEnv(tc.os, func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: %v, want %q", tc.os, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || h.OS != tc.os || !h.KnownProjects || h.Home != tc.want.Home || h.ConfigHome != tc.want.ConfigHome ||
			h.AppData != tc.want.AppData || h.CodexHome != tc.want.CodexHome {
			t.Errorf("%s %v: %+v %v, want %+v", tc.os, tc.env, h, err, tc.want)
		}
	}
}

func TestParseClient(t *testing.T) {
	for in, want := range map[string]Client{" Claude-Code ": ClaudeCode, "VSCODE": VSCode, "gemini": Gemini, "code": "", "": ""} {
		c, ok := ParseClient(in)
		if ok != (want != "") || ok && c != want {
			t.Errorf("ParseClient(%q) = %q %v, want %q", in, c, ok, want)
		}
	}
}

// One server is the same URL (a trailing slash aside), or the same
// command resolved in its project with the same arguments and variable
// names, wherever it is defined; two servers that share a name keep it
// apart by their client's name, and a number after.
func TestFindMergesAndNames(t *testing.T) {
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		".claude.json": `{"mcpServers": {
			"github": {"url": "https://api.example/mcp/"},
			"local": {"command": "./run.sh", "env": {"TOKEN": "${TOKEN}"}},
			"db": {"command": "db", "args": ["--ro"]}}}`,
		".cursor/mcp.json": `{"mcpServers": {
			"gh": {"url": "https://api.example/mcp"},
			"local": {"command": "./run.sh", "env": {"TOKEN": "ghp_literal"}},
			"db": {"command": "db", "args": ["--rw"]},
			"odd": "not an object"}}`,
		".gemini/settings.json": `{"mcpServers": {"db": {"command": "db", "args": ["--x"]}, "odd": ["still not"]}}`,
	})
	res := Find(Host{OS: "linux", Home: home})
	got := map[string]string{}
	for _, s := range res.Servers {
		var from []string
		for _, o := range s.Origins {
			from = append(from, string(o.Client)+":"+o.Name)
		}
		got[s.Name] = strings.Join(from, ",")
	}
	want := map[string]string{
		"github":     "claude-code:github,cursor:gh",
		"local":      "claude-code:local,cursor:local",
		"db":         "claude-code:db",
		"db-cursor":  "cursor:db",
		"db-gemini":  "gemini:db",
		"odd":        "cursor:odd",
		"odd-gemini": "gemini:odd",
	}
	if len(got) != len(want) {
		t.Errorf("servers %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: defined by %q, want %q", name, got[name], w)
		}
	}
}

// Names that collide with a name already given get a number after the
// client's name.
func TestMergeNumbersCollisions(t *testing.T) {
	o := func(client Client, name, cmd string) Origin {
		return Origin{Client: client, Name: name, Spec: map[string]any{"command": cmd}}
	}
	servers := merge([]Origin{o(Cursor, "a", "1"), o(Cursor, "a-cursor", "2"), o(Cursor, "a", "3"), o(Cursor, "a", "4")})
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "a a-cursor a-cursor-2 a-cursor-3" {
		t.Errorf("names %q", names)
	}
}

package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/discover/discovertest"
)

func TestLoadClientConfigErrors(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"empty", "", "is empty; it needs a JSON object such as {\"mcpServers\": {...}}"},
		{"not json", "mcpServers:\n  x: {}\n", "1:1: not valid JSON: invalid character looking for beginning of value"},
		{"truncated", `{"mcpServers": {"a": {"command": "x"`, "1:36: not valid JSON: unexpected end of JSON input"},
		{"trailing comma", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n}}", "2:24: a trailing comma before }, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove the comma"},
		{"comment", "{\"mcpServers\": {\n  // the report server\n  \"a\": {\"command\": \"x\"}}}", "2:3: a comment, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove it"},
		{"misspelt key", `{"mcpServers": {"a": {"comand": "x", "args": ["y"]}}}`,
			"mcpServers.a.comand: unknown key; did you mean command? (known keys here: args, command, cwd, disabled, env, envFile, headers, type, url)" +
				"\nFILE: mcpServers.a: neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server)"},
		{"misspelt env", `{"mcpServers": {"a": {"command": "x", "evn": {"TOKEN": "t"}}}}`,
			"mcpServers.a.evn: unknown key; did you mean env? (known keys here: args, command, cwd, disabled, env, envFile, headers, type, url)"},
		{"misspelt mcpServers", `{"mcpServer": {"a": {"command": "x"}}}`, `holds no mcpServers or servers; "mcpServer": did you mean mcpServers?`},
		{"top level list", `[{"mcpServers": {}}]`, "the top level must be a JSON object such as {\"mcpServers\": {...}}"},
		{"servers not an object", `{"mcpServers": ["a"]}`, "mcpServers: expected a mapping, got a list"},
		{"env not strings", `{"mcpServers": {"a": {"command": "x", "env": {"PORT": 8080}}}}`, "mcpServers.a.env.PORT: expected a string, got a number; quote the value"},
		{"stdio with url", `{"mcpServers": {"a": {"type": "stdio", "command": "x", "url": "https://x.example.com"}}}`,
			"mcpServers.a: both command and url are set; a server is either a process mcpwatch starts (command) or a remote server (url): keep one\n" +
				"FILE: mcpServers.a.type: stdio is for command servers; use http, sse or auto with a url"},
		{"http without url", `{"servers": {"a": {"type": "http", "command": "x"}}}`, "servers.a.type: is http but the server has no url; add one, or use stdio for a command"},
		{"bad reference", `{"mcpServers": {"a": {"command": "x", "args": ["${file:}"]}}}`, "mcpServers.a.args[0]: bad reference at byte 0: ${file:} needs a path (write $$ for a literal $)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".mcp.json")
			writeFile(t, path, tc.content)
			_, err := readClientConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			want := path + ": " + strings.ReplaceAll(tc.want, "FILE", path)
			if tc.want[0] >= '0' && tc.want[0] <= '9' {
				want = path + ":" + tc.want // FILE:LINE:COL
			}
			if err.Error() != want {
				t.Errorf("message\n got: %s\nwant: %s", err, want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.File != path {
				t.Errorf("not a *FieldError naming the file: %#v", err)
			}
		})
	}
}

// readClientConfig reads a client config's servers as an import does, with
// the built-in defaults.
func readClientConfig(path string) ([]Server, error) {
	servers, err := loadClientConfig(clientFiles{}, path, nil)
	for i := range servers {
		servers[i] = servers[i].Normalized(Defaults{})
	}
	return servers, err
}

// One client config file, imported by path or found by discover: one
// decoder, one meaning. Each file the host fixture holds is imported by
// path, and each server read the same as discovery read it.
func TestClientFileOneDecoder(t *testing.T) {
	home := discovertest.Home(t)
	res := discover.Find(discover.Host{OS: "linux", Home: home, ConfigHome: filepath.Join(home, ".config"),
		Projects: []string{filepath.Join(home, "work", "app")}})
	checked := 0
	for _, srv := range res.Servers {
		o := srv.Origins[0]
		found, err := DecodeEntry(Entry{File: o.File, Key: KeyPath(o.Key...), Name: srv.Name, Project: o.Project, Spec: o.Spec})
		if filepath.Base(o.File) == ".claude.json" || err != nil {
			continue // ~/.claude.json is Claude Code's own store, not a file to import
		}
		servers, err := loadClientConfig(clientFiles{}, o.File, nil)
		if err != nil {
			t.Errorf("%s: imported by path: %v", o.File, err)
			continue
		}
		var byPath *Server
		for i := range servers {
			if servers[i].Name == o.Name {
				byPath = &servers[i]
			}
		}
		if byPath == nil {
			t.Errorf("%s: %s found by discover, missing when imported by path", o.File, o.Name)
			continue
		}
		a, b := byPath.Normalized(BuiltinDefaults()), found.Normalized(BuiltinDefaults())
		if a.Command != b.Command || !reflect.DeepEqual(a.Args, b.Args) || a.URL != b.URL || a.Transport != b.Transport ||
			!reflect.DeepEqual(a.Env, b.Env) || !reflect.DeepEqual(a.Headers, b.Headers) || a.Dir != b.Dir {
			t.Errorf("%s: %s by path:\n%+v\nby discover:\n%+v", o.File, o.Name, a, b)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("compared %d servers, want the fixture's", checked)
	}
}

// The three ways the two decoders disagreed, each now read as its client
// reads it when imported by path.

package config

import (
	"path/filepath"
	"strings"
)

// installers are the commands that fetch and install what they run before
// running it, by their base name, with the arguments that make them do so
// (none: always). A probe of such a command gets StartTimeout while it
// starts (see ProbeTimeout).
var installers = []struct {
	command string
	args    []string
}{
	{"npx", nil},
	{"pnpx", nil},
	{"bunx", nil},
	{"uvx", nil},
	{"pipx", []string{"run"}},
	{"pnpm", []string{"dlx"}},
	{"yarn", []string{"dlx"}},
	{"npm", []string{"exec"}},
	{"uv", []string{"tool", "run"}},
	{"docker", []string{"run"}},
	{"podman", []string{"run"}},
}

// Installs names the command line by which s installs what it runs before
// running it ("npx", "pipx run", "docker run"), or "" when it does not: its
// first start may take minutes (a package download, an image pull). A
// Windows "cmd /c npx ..." counts as the command it runs.
func (s Server) Installs() string {
	if s.Command == "" {
		return ""
	}
	cmd, args := commandName(s.Command), s.Args
	if cmd == "cmd" && len(args) > 1 && strings.EqualFold(args[0], "/c") {
		cmd, args = commandName(args[1]), args[2:]
	}
	for _, in := range installers {
		if in.command != cmd || len(args) < len(in.args) {
			continue
		}
		if match := func() bool {
			for i, a := range in.args {
				if args[i] != a {
					return false
				}
			}
			return true
		}(); match {
			return strings.Join(append([]string{in.command}, in.args...), " ")
		}
	}
	return ""
}

// commandName is a command's base name without a Windows suffix
// (npx.cmd, docker.exe).
func commandName(path string) string {
	base := filepath.Base(strings.ReplaceAll(path, `\`, "/"))
	for _, ext := range []string{".cmd", ".exe", ".bat"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}

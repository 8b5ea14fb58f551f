// Package serverref says what a configured MCP server is as it was
// published: the package its command runs (an npm or PyPI package, a
// container image) and its URL in the one form catalogues compare.
//
// It is the one rule for "this server is that package": the canary
// catalogue's vouching and the credential issuer catalogue's ties both
// read it, so a package is recognised the same way everywhere. It reads a
// command line as its runner does, and only so: the package is the
// runner's package argument (npx's first operand or -p, uvx's --from or
// first operand, docker run's image), never any argument that happens to
// equal a package's name.
//
// It knows nothing of catalogues, credentials or versions' meanings
// beyond telling a release number from a range or a tag.
package serverref

import (
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Ecosystem is where a package is published.
type Ecosystem string

// The ecosystems a runner installs from.
const (
	NPM   Ecosystem = "npm"
	PyPI  Ecosystem = "pypi"
	Image Ecosystem = "image"
)

// Package is the package a server's command runs.
type Package struct {
	Ecosystem Ecosystem
	// Name is the package's name as published: "@scope/name",
	// "mcp-server-fetch", "ghcr.io/github/github-mcp-server".
	Name string
	// Version is what the command line pins, as written: "1.2.3",
	// "^1.2.0", "latest", "sha256:..." (an image digest), or "" for none.
	Version string
	// Runner is what runs it: "npx", "npm exec", "pnpm dlx", "yarn dlx",
	// "bunx", "uvx", "uv tool run", "pipx run", "docker run", "podman run",
	// or "node" for a script inside a node_modules folder.
	Runner string
	// Installed is, for a script inside a node_modules folder, the
	// package's folder there as the command line writes it
	// (".../node_modules/@scope/name"): its package.json says which
	// version is installed, which the command line does not.
	Installed string
}

// Release reads Version as a release number (MAJOR[.MINOR[.PATCH]], a
// leading "v" and a pre-release or build suffix aside): false for a
// range, a tag, a digest or no version at all, where what runs is
// whatever the registry resolves at each start.
func (p Package) Release() ([3]int, bool) { return ParseVersion(p.Version) }

// ParseVersion reads a release number (see Package.Release).
func ParseVersion(s string) ([3]int, bool) {
	var v [3]int
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || p[0] == '+' {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// Of is the package that command with args runs, when a known runner runs
// one: its package argument read as the runner reads it. A command that is
// the server's own binary, or a runner whose package argument cannot be
// told, runs no known package.
func Of(command string, args []string) (Package, bool) {
	name := runnerName(command)
	// A Windows launcher in a client config: cmd /c npx -y PKG.
	if (name == "cmd") && len(args) >= 2 && strings.EqualFold(args[0], "/c") {
		return Of(args[1], args[2:])
	}
	switch name {
	case "npx", "bunx":
		return npmOperand(name, args)
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			return npmOperand("npm exec", args[1:])
		}
	case "pnpm", "yarn":
		if len(args) > 0 && args[0] == "dlx" {
			return npmOperand(name+" dlx", args[1:])
		}
	case "uvx":
		return pypiOperand("uvx", args)
	case "uv":
		if len(args) > 1 && args[0] == "tool" && args[1] == "run" {
			return pypiOperand("uv tool run", args[2:])
		}
	case "pipx":
		if len(args) > 0 && args[0] == "run" {
			return pypiOperand("pipx run", args[1:])
		}
	case "docker", "podman":
		switch {
		case len(args) > 0 && args[0] == "run":
			return imageOperand(name+" run", args[1:])
		case len(args) > 1 && args[0] == "container" && args[1] == "run":
			return imageOperand(name+" run", args[2:])
		}
	case "node", "bun", "deno":
		if name == "bun" && len(args) > 0 && args[0] == "x" {
			return npmOperand("bunx", args[1:])
		}
		// A script inside an installed package: node .../node_modules/PKG/dist/index.js.
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if pkg, dir, ok := nodeModulesPackage(a); ok {
				return Package{Ecosystem: NPM, Name: pkg, Runner: "node", Installed: dir}, true
			}
			break
		}
	}
	return Package{}, false
}

// runnerName is a command's program name without its folder and a
// Windows extension: "/usr/local/bin/npx" and "npx.cmd" are "npx".
func runnerName(command string) string {
	base := filepath.Base(strings.ReplaceAll(command, `\`, "/"))
	for _, ext := range []string{".cmd", ".exe", ".bat", ".CMD", ".EXE"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// npxValueFlag tells whether flag is one of npx's (and npm exec's, pnpm
// dlx's, bunx's) flags that take the next argument as their value.
func npxValueFlag(flag string) bool {
	switch flag {
	case "-p", "--package", "-c", "--call", "--prefix", "--registry", "--cache", "--userconfig",
		"--node-options", "-w", "--workspace", "--loglevel":
		return true
	}
	return false
}

// npmOperand reads npx's package: the value of the first -p/--package, or
// else its first operand. A -c/--call runs a shell command: no package.
func npmOperand(runner string, args []string) (Package, bool) {
	spec := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if spec == "" && i+1 < len(args) {
				spec = args[i+1]
			}
			break
		}
		flag, value, hasValue := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-") {
			if flag == "-c" || flag == "--call" {
				return Package{}, false
			}
			if (flag == "-p" || flag == "--package") && spec == "" {
				switch {
				case hasValue:
					spec = value
				case i+1 < len(args):
					spec = args[i+1]
				}
			}
			if npxValueFlag(flag) && !hasValue {
				i++
			}
			continue
		}
		if spec == "" {
			spec = a
		}
		break
	}
	name, version, ok := splitNPM(spec)
	if !ok {
		return Package{}, false
	}
	return Package{Ecosystem: NPM, Name: name, Version: version, Runner: runner}, true
}

// splitNPM reads "name", "name@version", "@scope/name" or
// "@scope/name@version". A path, a URL, a git or file spec is no
// published package.
func splitNPM(spec string) (name, version string, ok bool) {
	if spec == "" || strings.ContainsAny(spec, `\: `) || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") {
		return "", "", false
	}
	name = spec
	if i := strings.LastIndex(spec, "@"); i > 0 {
		name, version = spec[:i], spec[i+1:]
	}
	if strings.HasPrefix(name, "@") != strings.Contains(name, "/") || strings.Count(name, "/") > 1 ||
		strings.HasSuffix(name, "/") || name == "@" {
		return "", "", false
	}
	return name, version, true
}

// uvValueFlag tells whether flag is one of uvx's and pipx run's flags that
// take a value.
func uvValueFlag(flag string) bool {
	switch flag {
	case "--from", "--spec", "--with", "-w", "--python", "-p", "--index-url", "-i", "--extra-index-url",
		"--index", "--default-index", "--with-requirements", "--with-editable", "--constraints", "-c",
		"--overrides", "--pip-args", "--directory", "--project", "--cache-dir", "--config-file",
		"--env-file":
		return true
	}
	return false
}

// pypiOperand reads uvx's (pipx run's) package: the value of --from
// (--spec), or else the first operand, whose version is "==V" or "@V".
func pypiOperand(runner string, args []string) (Package, bool) {
	spec := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			continue
		}
		flag, value, hasValue := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-") {
			if (flag == "--from" || flag == "--spec") && spec == "" {
				switch {
				case hasValue:
					spec = value
				case i+1 < len(args):
					spec = args[i+1]
				}
			}
			if uvValueFlag(flag) && !hasValue {
				i++
			}
			continue
		}
		if spec == "" {
			spec = a
		}
		break
	}
	name, version := spec, ""
	if i := strings.Index(spec, "=="); i >= 0 {
		name, version = spec[:i], spec[i+2:]
	} else if i := strings.Index(spec, "@"); i >= 0 {
		name, version = spec[:i], spec[i+1:]
	}
	if i := strings.Index(name, "["); i >= 0 { // extras: pkg[cli]
		name = name[:i]
	}
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, `/\:<>=!~ `) || strings.HasPrefix(name, ".") {
		return Package{}, false
	}
	return Package{Ecosystem: PyPI, Name: name, Version: version, Runner: runner}, true
}

// NormalPyPI is a PyPI name as PyPI compares it (PEP 503): lower case,
// runs of "-", "_" and "." as one "-".
func NormalPyPI(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// dockerValueFlag tells whether flag is one of docker run's (and podman
// run's) flags that take the next argument as their value; a flag not
// listed takes none.
func dockerValueFlag(flag string) bool {
	switch flag {
	case "-e", "--env", "--env-file", "-v", "--volume", "--name", "--network", "--net", "-p", "--publish",
		"-u", "--user", "-w", "--workdir", "--entrypoint", "--mount", "-l", "--label", "--label-file",
		"--platform", "--pull", "-m", "--memory", "--cpus", "--add-host", "--dns", "-h", "--hostname",
		"--log-driver", "--log-opt", "--restart", "--runtime", "--tmpfs", "--ulimit", "--cap-add",
		"--cap-drop", "--security-opt", "--device", "--gpus", "--ipc", "--pid", "--userns",
		"--volumes-from", "--stop-signal", "--stop-timeout", "--cidfile", "--expose", "--group-add",
		"--shm-size", "--health-cmd", "--cgroupns", "--uts", "-a", "--attach", "--secret",
		"--annotation", "--arch", "--os", "--variant":
		return true
	}
	return false
}

// imageOperand reads docker run's image: its first operand, "IMAGE",
// "IMAGE:TAG", "IMAGE@sha256:..." or "IMAGE:TAG@sha256:...", where the
// digest is what runs (docker ignores the tag beside one), so it is the
// version.
func imageOperand(runner string, args []string) (Package, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			flag, _, hasValue := strings.Cut(a, "=")
			if dockerValueFlag(flag) && !hasValue {
				i++
			}
			continue
		}
		name, version := a, ""
		if j := strings.Index(a, "@"); j >= 0 {
			name, version = a[:j], a[j+1:]
		}
		if j := strings.LastIndex(name, ":"); j > strings.LastIndex(name, "/") {
			if version == "" {
				version = name[j+1:]
			}
			name = name[:j]
		}
		if name == "" || strings.ContainsAny(name, " \\") {
			return Package{}, false
		}
		return Package{Ecosystem: Image, Name: NormalImage(name), Version: version, Runner: runner}, true
	}
	return Package{}, false
}

// NormalImage is an image name as registries resolve it: Docker Hub's
// implicit "docker.io/" and "library/" dropped, so "mcp/github",
// "docker.io/mcp/github" and "index.docker.io/mcp/github" are one name.
func NormalImage(name string) string {
	name = strings.ToLower(name)
	for _, p := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		name = strings.TrimPrefix(name, p)
	}
	return strings.TrimPrefix(name, "library/")
}

// nodeModulesPackage is the package a path into a node_modules folder
// names, and its folder: ".../node_modules/@scope/name/dist/index.js" is
// "@scope/name", in ".../node_modules/@scope/name".
func nodeModulesPackage(p string) (name, dir string, ok bool) {
	p = strings.ReplaceAll(p, `\`, "/")
	i := strings.LastIndex(p, "node_modules/")
	if i < 0 {
		return "", "", false
	}
	root := p[:i+len("node_modules/")]
	parts := strings.Split(p[len(root):], "/")
	switch {
	case len(parts) >= 3 && strings.HasPrefix(parts[0], "@") && parts[1] != "":
		name = parts[0] + "/" + parts[1]
	case len(parts) >= 2 && parts[0] != "" && !strings.HasPrefix(parts[0], "@"):
		name = parts[0]
	default:
		return "", "", false
	}
	return name, root + name, true
}

// NormalURL is a URL as catalogues compare it: scheme and host in lower
// case, no userinfo, query, fragment, default port or trailing slash. A
// string that is no absolute URL is returned as it is.
func NormalURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	scheme := strings.ToLower(u.Scheme)
	if p := u.Port(); p != "" && !(p == "443" && scheme == "https" || p == "80" && scheme == "http") {
		host += ":" + p
	}
	p := strings.TrimRight(path.Clean("/"+u.Path), "/")
	return scheme + "://" + host + p
}

// Host is the host of a URL in lower case, without its port; "" for a
// string that is no absolute URL.
func Host(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

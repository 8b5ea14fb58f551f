package doctor

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// invocation is a command of a script that runs mcpwatch.
type invocation struct {
	cmd *command
	// args are mcpwatch's arguments ("check", "--strict", ...).
	args []word
	// env are the variables the command line itself sets: NAME=value
	// before it, or env NAME=value.
	env []assignment
	// via says how mcpwatch is run, for messages: "mcpwatch", "go run",
	// "docker run".
	via string
}

// mcpwatchPackage is a Go package path that builds mcpwatch: this module's
// command, at a version or not, or ./cmd/mcpwatch in a clone.
var mcpwatchPackage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)cmd/mcpwatch/?(@[^/\s]+)?$`) })

// findInvocation reports whether c runs mcpwatch, directly (by name or by
// path: mcpwatch, ./bin/mcpwatch, $HOME/go/bin/mcpwatch), through go run
// of its package, or as the command of a docker run of an mcpwatch image;
// behind wrappers that run their arguments (env, time, exec, command,
// nohup, sudo, nice, timeout).
func findInvocation(c *command, r resolver) (invocation, bool) {
	inv := invocation{cmd: c, env: c.assigns}
	w := c.words
	text := func(i int) string {
		if i >= len(w) {
			return ""
		}
		s, _ := w[i].resolve(r)
		return s
	}
	i := 0
	for i < len(w) {
		switch path.Base(text(i)) {
		case "env":
			i++
			for i < len(w) {
				t := text(i)
				if name, value, ok := splitAssignment(w[i]); ok {
					inv.env = append(inv.env, assignment{name: name, value: value})
				} else if t == "-u" || t == "--unset" || t == "-C" || t == "--chdir" || t == "-S" {
					i++
				} else if !strings.HasPrefix(t, "-") {
					break
				}
				i++
			}
		case "time", "exec", "command", "nohup", "builtin":
			i++
			for i < len(w) && strings.HasPrefix(text(i), "-") {
				i++
			}
		case "sudo":
			i++
			for i < len(w) && strings.HasPrefix(text(i), "-") {
				if t := text(i); t == "-u" || t == "-g" || t == "-C" || t == "-D" || t == "-h" {
					i++
				}
				i++
			}
		case "nice":
			i++
			for i < len(w) && strings.HasPrefix(text(i), "-") {
				if text(i) == "-n" {
					i++
				}
				i++
			}
		case "timeout":
			i++
			for i < len(w) && strings.HasPrefix(text(i), "-") {
				if t := text(i); t == "-s" || t == "-k" || t == "--signal" || t == "--kill-after" {
					i++
				}
				i++
			}
			i++ // the duration
		default:
			return inv.program(i, text)
		}
	}
	return invocation{}, false
}

// program looks at the program word at i (wrappers skipped).
func (inv invocation) program(i int, text func(int) string) (invocation, bool) {
	w := inv.cmd.words
	prog := text(i)
	switch base := path.Base(prog); {
	case base == "mcpwatch" || base == "mcpwatch.exe":
		inv.args, inv.via = w[i+1:], "mcpwatch"
		return inv, true
	case base == "go" && text(i+1) == "run":
		for j := i + 2; j < len(w); j++ {
			t := text(j)
			if strings.HasPrefix(t, "-") {
				if goRunValueFlags[strings.TrimLeft(t, "-")] {
					j++ // the flag's value
				}
				continue
			}
			if mcpwatchPackage().MatchString(t) {
				inv.args, inv.via = w[j+1:], "go run"
				return inv, true
			}
			return invocation{}, false
		}
	case (base == "docker" || base == "podman") && text(i+1) == "run":
		for j := i + 2; j < len(w); j++ {
			t := text(j)
			if strings.HasPrefix(t, "-") {
				if dockerRunTakesValue(t) {
					j++
				}
				continue
			}
			if isMcpwatchImage(t) {
				inv.args, inv.via = w[j+1:], "docker run"
				return inv, true
			}
			return invocation{}, false
		}
	}
	return invocation{}, false
}

// goRunValueFlags are the flags of go run (the build flags) that take a
// value in the next word.
var goRunValueFlags = map[string]bool{
	"C": true, "p": true, "o": true, "tags": true, "ldflags": true, "gcflags": true, "asmflags": true,
	"mod": true, "modfile": true, "pkgdir": true, "overlay": true, "exec": true, "covermode": true,
	"coverpkg": true, "toolexec": true, "buildmode": true, "compiler": true, "gccgoflags": true,
	"installsuffix": true, "pgo": true, "buildvcs": false,
}

// dockerRunTakesValue: a docker run option whose value is the next word.
// Most take one; these do not.
func dockerRunTakesValue(opt string) bool {
	if strings.Contains(opt, "=") {
		return false
	}
	if !strings.HasPrefix(opt, "--") {
		// a cluster of short options: only the last may take a value
		last := opt[len(opt)-1:]
		return strings.Contains("aceghlmpuvw", last)
	}
	switch opt {
	case "--rm", "--detach", "--interactive", "--tty", "--init", "--privileged", "--read-only",
		"--publish-all", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy", "--disable-content-trust", "--quiet":
		return false
	}
	return true
}

// isMcpwatchImage: an image reference whose repository's last part is
// mcpwatch (ghcr.io/mcpwatch/mcpwatch:v0.1.0, mcpwatch@sha256:...).
func isMcpwatchImage(ref string) bool {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	repo := ref
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		repo = ref[:i]
	}
	return path.Base(repo) == "mcpwatch"
}

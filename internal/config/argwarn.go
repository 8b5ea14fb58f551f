package config

import (
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// Warnings are what config check says without failing: a secret given to a
// server on its command line. A process's arguments are readable by every
// local user (/proc/PID/cmdline, ps), while its environment is readable
// only by its owner; a server that reads its key from an env variable
// should get it there.
func (c *Config) Warnings() []string {
	var out []string
	for _, s := range c.Servers {
		secretAt := map[int]bool{}
		for _, sp := range secret.ArgSecrets(s.Args) {
			if strings.Contains(s.Args[sp.Arg][sp.Start:sp.End], "${") {
				secretAt[sp.Arg] = true
			}
		}
		for i, a := range s.Args {
			if !secretAt[i] && !expand.ReferencesSecret(a) {
				continue
			}
			out = append(out, fmt.Sprintf("server %q (%s) args[%d]: %s puts a secret on the command line, which every local user can read (ps, /proc/PID/cmdline); give it in env if the server reads it from there",
				s.Name, s.Source, i, expand.RedactArgs([]string{a})[0]))
		}
	}
	return out
}

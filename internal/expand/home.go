package expand

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// Home is the one reading of a path that starts with "~/" (the lock,
// imports, inputs and contracts files at load; a command, cwd, CA file,
// envFile, ${file:...}, private key or refresh token file at probe time):
// the home directory is $HOME as lookup reads it, or, when HOME is unset
// or empty (a service manager's bare environment), the user's home in the
// account database, as a shell's tilde expansion does. ok is false when p
// starts with "~/" and neither gives one; p is then returned as written,
// never joined to a directory. Any other path is returned as it is.
func Home(p string, lookup func(string) (string, bool)) (string, bool) {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok {
		return p, true
	}
	home := ""
	if lookup != nil {
		home, _ = lookup("HOME")
	}
	if home == "" {
		if u, err := CurrentUser(); err == nil {
			home = u.HomeDir
		}
	}
	if home == "" {
		return p, false
	}
	return filepath.Join(home, rest), true
}

// CurrentUser is user.Current; a test replaces it to have no account.
var CurrentUser = user.Current

// ProcessLookup reads mcpwatch's own environment, for paths read at load.
func ProcessLookup(name string) (string, bool) { return os.LookupEnv(name) }

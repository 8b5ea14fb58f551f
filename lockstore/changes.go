package lockstore

import (
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Change is what relocking did to one server, for a person to review.
type Change struct {
	Server  string   `json:"server"`
	Added   []string `json:"added,omitempty"`   // tools newly locked (all of them for a new server)
	Removed []string `json:"removed,omitempty"` // tools no longer locked (all of them for a removed server)
	Changed []string `json:"changed,omitempty"` // tools in both whose fingerprint or description hash differs
}

// Changes lists, per server in name order, the tools that old and new lock
// differently; servers locked alike are left out. old may be nil (no lock
// yet). A tool that gains or loses fingerprints (relocking with or without
// them) is not Changed: only two recorded values that differ are.
func Changes(old, new *Lock) []Change {
	servers := append(old.Servers(), new.Servers()...)
	slices.Sort(servers)
	servers = slices.Compact(servers)

	var changes []Change
	for _, server := range servers {
		before, _ := old.Entry(server)
		after, _ := new.Entry(server)
		c := Change{Server: server}
		i, j := 0, 0
		for i < len(before.Tools) || j < len(after.Tools) {
			switch {
			case j == len(after.Tools) || i < len(before.Tools) && before.Tools[i].Name < after.Tools[j].Name:
				c.Removed = append(c.Removed, before.Tools[i].Name)
				i++
			case i == len(before.Tools) || after.Tools[j].Name < before.Tools[i].Name:
				c.Added = append(c.Added, after.Tools[j].Name)
				j++
			default:
				if fingerprintsDiffer(before.Tools[i], after.Tools[j]) {
					c.Changed = append(c.Changed, after.Tools[j].Name)
				}
				i++
				j++
			}
		}
		if len(c.Added)+len(c.Removed)+len(c.Changed) > 0 {
			changes = append(changes, c)
		}
	}
	return changes
}

func fingerprintsDiffer(a, b ToolLock) bool {
	differ := func(x, y string) bool { return x != "" && y != "" && x != y }
	return differ(a.Schema, b.Schema) || differ(a.Description, b.Description)
}

// String is the change in one line, as `mcpwatch lock` prints it: every
// name, each cut for people (sanitize.Name); the lock keeps them whole.
func (c Change) String() string {
	var parts []string
	if len(c.Added) > 0 {
		parts = append(parts, "+ "+sanitize.JoinNames(c.Added, ", ", 0))
	}
	if len(c.Removed) > 0 {
		parts = append(parts, "- "+sanitize.JoinNames(c.Removed, ", ", 0))
	}
	if len(c.Changed) > 0 {
		parts = append(parts, "~ "+sanitize.JoinNames(c.Changed, ", ", 0))
	}
	return c.Server + ": " + strings.Join(parts, "; ")
}

package deploy_test

import (
	"regexp"
	"strings"
	"testing"
)

// The install steps never start an MCP server as root: a command of
// mcpwatch that starts the configured servers (lock, check, probe, init)
// runs as the service user, with its HOME, as the daemon runs them.
func TestSystemdStepsStartServersAsTheServiceUser(t *testing.T) {
	readme := string(readFile(t, "systemd/README.md"))
	starts := regexp.MustCompile(`\bmcpwatch (lock|check|probe|init)\b`)
	found := 0
	for i, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || !starts.MatchString(line) {
			continue
		}
		found++
		if !strings.HasPrefix(line, "sudo -u mcpwatch env HOME=/var/lib/mcpwatch ") {
			t.Errorf("systemd/README.md:%d starts MCP servers as another user than the service's: %s", i+1, line)
		}
	}
	if found == 0 {
		t.Error("systemd/README.md no longer writes the first lock: the install steps leave the daemon without one")
	}
}

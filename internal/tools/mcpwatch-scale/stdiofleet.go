package main

import (
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// markerEnv is set in the environment of every stdio server a run starts
// (value: the run's id), so the harness can find them, and any they leave
// behind, wherever they were reparented to.
const markerEnv = "MCPWATCH_SCALE_RUN"

// stdioServer is one stdio server of the fleet: mcpwatch-testserver with a
// behavior.
type stdioServer struct {
	name     string
	era      probetest.Era
	behavior probetest.Behavior
}

// planStdioFleet makes n servers, mostly healthy; one in a hundred stalls
// on tools/list (the probe times out and kills it) and one in a hundred is
// Unresponsive (ignores SIGTERM and stdin, and leaves a grandchild): the
// two that leak a process if the kill is not done right.
func planStdioFleet(n int) []stdioServer {
	eras := []probetest.Era{probetest.EraModern, probetest.EraLegacy, probetest.EraDual}
	servers := make([]stdioServer, n)
	for i := range servers {
		s := stdioServer{name: serverName(i, n), era: eras[i%len(eras)], behavior: probetest.Healthy}
		switch i % 100 {
		case 25:
			s.behavior = probetest.StallToolsList
		case 75:
			s.behavior = probetest.Unresponsive
		}
		servers[i] = s
	}
	return servers
}

// writeStdioConfig writes mcpwatch.yml and its lock for a stdio fleet of
// the test server binary at testserver (an absolute path).
func writeStdioConfig(dir, testserver, runID string, servers []stdioServer, ds daemonSettings) (string, error) {
	var b strings.Builder
	writeDefaults(&b, ds)
	b.WriteString("servers:\n")
	lock := make(map[string][]string, len(servers))
	for _, s := range servers {
		fmt.Fprintf(&b, "  %s:\n    command: %q\n    args: [--era, %s, --behavior, %s]\n    env: {%s: %q}\n",
			s.name, testserver, s.era, s.behavior, markerEnv, runID)
		lock[s.name] = toolNames(probetest.DefaultTools())
	}
	return writeConfigAndLock(dir, b.String(), lock)
}

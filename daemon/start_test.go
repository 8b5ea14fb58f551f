package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// A command that installs what it runs gets its start_timeout until a
// probe ends other than at its deadline: the first probe, the one after a
// first start that timed out, and the first after a reload; the probes of
// a started server are warm.
func TestStartTimeoutUntilStarted(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("memory", func(f *fakeServer) { f.fail = probe.ReasonTimeout })
		doc := map[string]any{
			"defaults": map[string]any{"schedule": "@every 1m"},
			"servers": map[string]any{
				"memory": map[string]any{"command": "npx", "args": []any{"-y", "@modelcontextprotocol/server-memory@2025.9.25"}},
			},
		}
		s := simulate(t, t.TempDir(), doc, fake, Options{})
		s.ready()
		if got := s.server("memory").probeTimeout(0); got != 2*time.Minute {
			t.Errorf("a first start's deadline is %s, want start_timeout, 2m", got)
		}
		s.advance(time.Minute) // timed out again: still starting
		fake.set("memory", func(f *fakeServer) { f.fail = "" })
		s.advance(time.Minute) // started
		s.advance(time.Minute)
		if got := s.server("memory").probeTimeout(0); got != 10*time.Second {
			t.Errorf("a started server's deadline is %s, want its timeout, 10s", got)
		}
		if err := s.d.Reload(); err != nil {
			t.Fatal(err)
		}
		s.advance(time.Minute)
		want := []bool{false, false, false, true, false}
		if got := fake.get("memory").warm; !slices.Equal(got, want) {
			t.Errorf("warm per probe %v, want %v", got, want)
		}
	})
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// slowNpx is a stdio server started as "npx" (the test binary linked under
// that name) that reads nothing for delay after it starts, as npx does
// while it installs the package.
func slowNpx(t *testing.T, delay time.Duration) config.Server {
	t.Helper()
	path, args, env := probetest.Command(probetest.Config{StartDelayMS: int(delay / time.Millisecond)})
	npx := filepath.Join(t.TempDir(), "npx")
	if err := os.Symlink(path, npx); err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		env[k] = strings.ReplaceAll(v, "$", "$$") // values, not references
	}
	return normalized(config.Server{Name: "memory", Command: npx, Args: args, Env: env, Timeout: 100 * time.Millisecond})
}

// A command that installs before it runs gets its start_timeout until it
// has started: a start slower than the probe's timeout passes, and the
// same probe of a warm server keeps the timeout.
func TestProbeStartTimeout(t *testing.T) {
	t.Parallel()
	s := slowNpx(t, 1500*time.Millisecond)
	if s.StartTimeout != config.DefaultStartTimeout {
		t.Fatalf("start_timeout %s, want the default %s", s.StartTimeout, config.DefaultStartTimeout)
	}
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{})
	if !obs.Result.OK || obs.Timeout != config.DefaultStartTimeout {
		t.Fatalf("first start: ok %v (%s: %s) within %s; want it to pass within the start timeout", obs.Result.OK, obs.Result.Reason, obs.Result.Error, obs.Timeout)
	}
	if obs := Probe(t.Context(), NewPool(1, 1), s, Request{Warm: true, Timeout: 0}); obs.Timeout != 100*time.Millisecond {
		t.Errorf("a warm server's probe gets %s, want its timeout, 100ms", obs.Timeout)
	}
	if obs := Probe(t.Context(), NewPool(1, 1), s, Request{Warm: true, Timeout: 50 * time.Millisecond}); obs.Timeout != 50*time.Millisecond {
		t.Errorf("with --timeout 50ms a warm server's probe gets %s", obs.Timeout)
	}
}

// A first start that times out says the package may still be installing,
// and which setting gives it longer.
func TestProbeStartTimeoutMessage(t *testing.T) {
	t.Parallel()
	s := slowNpx(t, time.Minute)
	s.StartTimeout = 300 * time.Millisecond
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{})
	if obs.Result.Reason != probe.ReasonTimeout {
		t.Fatalf("reason %q (%s), want timeout", obs.Result.Reason, obs.Result.Error)
	}
	for _, want := range []string{"npx installs the package before it starts", "raise start_timeout (300ms now", "--timeout"} {
		if !strings.Contains(obs.Result.Error, want) {
			t.Errorf("error %q does not say %q", obs.Result.Error, want)
		}
	}
	// A warm server's timeout is its own: nothing was installing.
	obs = Probe(t.Context(), NewPool(1, 1), s, Request{Warm: true})
	if obs.Result.Reason != probe.ReasonTimeout || strings.Contains(obs.Result.Error, "installs") {
		t.Errorf("warm: %s: %s", obs.Result.Reason, obs.Result.Error)
	}
}

package preflight_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// TestMain serves as a probetest stdio server when re-executed by one, and
// otherwise runs the tests and checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	probetest.RunIfChild()
	goleak.VerifyTestMain(m)
}

// testServer is one entry of servers: in an mcpwatch.yml, running this test
// binary as a probetest server with cfg, plus extra env.
func testServer(cfg probetest.Config, extraEnv map[string]string) map[string]any {
	path, args, env := probetest.Command(cfg)
	for k, v := range extraEnv {
		env[k] = v
	}
	return map[string]any{"command": path, "args": args, "env": env}
}

// loadConfig writes servers as an mcpwatch.yml (JSON is YAML) in a temp dir
// and loads it as the CLI would.
func loadConfig(t *testing.T, servers map[string]map[string]any) *config.Config {
	t.Helper()
	data, err := json.Marshal(map[string]any{"servers": servers})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcpwatch.yml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", data, err)
	}
	return cfg
}

// parseLock parses a lock written as JSON.
func parseLock(t *testing.T, text string) *lockstore.Lock {
	t.Helper()
	l, err := lockstore.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse lock %s: %v", text, err)
	}
	return l
}

// check runs a preflight over servers against lock.
func check(t *testing.T, servers map[string]map[string]any, lock string, opts preflight.Options) *preflight.Report {
	t.Helper()
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	if opts.Timeout == 0 {
		// A bound only: these servers answer, exit or fail to start, and a
		// -race test server on a loaded machine (or one listing a 3 MB
		// tool name) can take longer than the default 10 s to. A test of
		// a deadline sets its own.
		opts.Timeout = time.Minute
	}
	return preflight.Check(context.Background(), preflight.Input{
		Config: loadConfig(t, servers), ConfigSource: "mcpwatch.yml",
		Lock: parseLock(t, lock), LockPath: "mcp-tools.lock.json",
	}, opts)
}

func serverReport(t *testing.T, r *preflight.Report, name string) preflight.ServerReport {
	t.Helper()
	for _, s := range r.Servers {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no server %q in the report: %+v", name, r.Servers)
	return preflight.ServerReport{}
}

package launch

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// TestMain checks that no goroutine outlives the tests: reading a secret file must leave nothing behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var mapLookup = testtool.Lookup

var writeFile = testtool.WriteFile

func removeFile(path string) error { return os.Remove(path) }

// load is config.Load with what the configuration imports read.
func load(path string) (*config.Config, error) { return imports.Load(path) }

// readClientConfig reads a client config's servers as an import does, with
// the built-in defaults.
func readClientConfig(t *testing.T, path string) ([]config.Server, error) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	yml := filepath.Join(t.TempDir(), "mcpwatch.yml")
	writeFile(t, yml, "imports: ["+abs+"]\n")
	cfg, err := load(yml)
	if err != nil {
		return nil, err
	}
	return cfg.Servers, nil
}

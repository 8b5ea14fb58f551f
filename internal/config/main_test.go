package config

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// TestMain checks that no goroutine outlives the tests: reading a secret file must leave nothing behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var mapLookup = testtool.Lookup

var writeFile = testtool.WriteFile

func removeFile(path string) error { return os.Remove(path) }

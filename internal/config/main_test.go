package config

import (
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

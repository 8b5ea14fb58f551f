package browser

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: Open reaps the
// browser it started in a goroutine, which ends when the browser exits.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

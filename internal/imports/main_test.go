package imports

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: importing from a
// registry goes through an HTTP client whose connections must be closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

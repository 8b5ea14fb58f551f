package expand

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: reading a secret file must leave nothing behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

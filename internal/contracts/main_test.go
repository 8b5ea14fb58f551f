package contracts

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: a jsonSchema check
// runs in one of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

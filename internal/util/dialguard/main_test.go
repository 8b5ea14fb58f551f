package dialguard

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: the guarded transport's dials and connections must all end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

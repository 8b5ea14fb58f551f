package oauth_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: token requests and
// discovery go through HTTP clients whose connections must be closed, a
// sign-in's loopback listener must be shut down, and a client must stop
// nothing it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

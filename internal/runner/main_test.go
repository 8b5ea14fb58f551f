package runner

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// TestMain serves as a probetest stdio server when re-executed by one, and
// otherwise runs the tests and checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	probetest.RunIfChild()
	goleak.VerifyTestMain(m)
}

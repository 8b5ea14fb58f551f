package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: the harness starts fleets of servers, scrapers and daemons, and stops every one.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

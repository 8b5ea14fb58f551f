package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: the harness starts fleets of servers, scrapers and daemons, and stops every one.
func TestMain(m *testing.M) {
	if os.Getenv(floorClientEnv) == "1" { // started by runFloor: be the harness
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

package testtool

import (
	"testing"
	"time"
)

// Within runs f, failing the test if it has not returned after a minute:
// the guard of a read that would block for ever, not a timing claim.
func Within[T any](t testing.TB, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s has not returned after a minute: it blocks", what)
		panic("unreachable")
	}
}

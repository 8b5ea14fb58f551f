package probe

import (
	"context"
	"time"
)

// Wait waits d, or until ctx ends, and then says which: the one cancellable
// wait, for a stream's retry delay here, a contract's retry in package
// contracts and the gap between one server's canary calls in package
// runner.
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package probetest

import (
	"context"
	"io"
	"time"
)

// dripWriter writes one byte at a time, DripIntervalMS apart, flushing each:
// the SlowBody behavior. It gives up when ctx ends.
type dripWriter struct {
	ctx   context.Context
	w     io.Writer
	flush func()
}

func (d *dripWriter) Write(p []byte) (int, error) {
	timer := time.NewTimer(DripIntervalMS * time.Millisecond)
	defer timer.Stop()
	for i := range p {
		if i > 0 {
			timer.Reset(DripIntervalMS * time.Millisecond)
		}
		select {
		case <-d.ctx.Done():
			return i, d.ctx.Err()
		case <-timer.C:
		}
		if _, err := d.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
		d.flush()
	}
	return len(p), nil
}

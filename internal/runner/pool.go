package runner

import (
	"context"
	"sync/atomic"
)

// Pool bounds how many probes run at once, overall and of stdio servers
// (each of which is a process, with its memory and start-up CPU). Its
// bounds are fixed: to change them, make a new Pool; probes holding a slot
// of the old one give it back there.
type Pool struct {
	all   chan struct{}
	stdio chan struct{}
	// waiting counts the Acquires that found their slot taken and wait for
	// one (tests wait on it instead of sleeping).
	waiting atomic.Int32
}

// NewPool returns a Pool of all slots, of which at most stdio go to stdio
// probes. Both are at least 1, and stdio is at most all.
func NewPool(all, stdio int) *Pool {
	all = max(all, 1)
	stdio = min(max(stdio, 1), all)
	return &Pool{all: make(chan struct{}, all), stdio: make(chan struct{}, stdio)}
}

// Sizes returns the bounds as NewPool settled them.
func (p *Pool) Sizes() (all, stdio int) { return cap(p.all), cap(p.stdio) }

// Acquire waits for a slot, or for ctx to end. A stdio probe takes its
// stdio slot first, so a probe waiting on the stdio bound never holds one
// of the shared slots that an HTTP probe could use. Call release exactly
// once when the probe ends.
func (p *Pool) Acquire(ctx context.Context, stdio bool) (release func(), err error) {
	if stdio {
		if err := p.take(ctx, p.stdio); err != nil {
			return nil, err
		}
	}
	if err := p.take(ctx, p.all); err != nil {
		if stdio {
			<-p.stdio
		}
		return nil, err
	}
	return func() {
		<-p.all
		if stdio {
			<-p.stdio
		}
	}, nil
}

// take puts a token into slots, waiting for room or for ctx to end; once
// ctx has ended it takes no slot, free or not.
func (p *Pool) take(ctx context.Context, slots chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package runner

import "context"

// Pool bounds how many probes run at once, overall and of stdio servers
// (each of which is a process, with its memory and start-up CPU). Its
// bounds are fixed: to change them, make a new Pool; probes holding a slot
// of the old one give it back there.
type Pool struct {
	all   chan struct{}
	stdio chan struct{}
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
		select {
		case p.stdio <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case p.all <- struct{}{}:
	case <-ctx.Done():
		if stdio {
			<-p.stdio
		}
		return nil, ctx.Err()
	}
	return func() {
		<-p.all
		if stdio {
			<-p.stdio
		}
	}, nil
}

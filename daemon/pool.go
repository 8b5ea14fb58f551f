package daemon

import "context"

// pool bounds how many probes run at once, overall and of stdio servers
// (each of which is a process, with its memory and start-up CPU). A reload
// that changes the bounds makes a new pool; probes holding a slot of the old
// one give it back there.
type pool struct {
	all   chan struct{}
	stdio chan struct{}
}

func newPool(all, stdio int) *pool {
	all = max(all, 1)
	stdio = min(max(stdio, 1), all)
	return &pool{all: make(chan struct{}, all), stdio: make(chan struct{}, stdio)}
}

func (p *pool) sizes() (all, stdio int) { return cap(p.all), cap(p.stdio) }

// acquire waits for a slot. A stdio probe takes its stdio slot first, so a
// probe waiting on the stdio bound never holds one of the shared slots that
// an HTTP probe could use.
func (p *pool) acquire(ctx context.Context, stdio bool) (release func(), err error) {
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

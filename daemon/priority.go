package daemon

import (
	"context"
	"sync"
)

// priority keeps scheduled probes ahead of on-demand ones in the pool. The
// pool serves its waiters in turn, so an on-demand probe that asked first
// would take a slot a scheduled probe waits for; instead an on-demand probe
// asks the pool only once a slot is free and no scheduled probe waits for
// one, and waits here until then. It counts the daemon's own probes, which
// are what the pool serves.
type priority struct {
	mu        sync.Mutex
	scheduled int // scheduled probes waiting for a pool slot
	inUse     int // probes holding a slot
	admitted  int // on-demand probes let through, not holding a slot yet
	yielding  int // on-demand probes waiting here
	changed   chan struct{}
}

func newPriority() *priority { return &priority{changed: make(chan struct{})} }

// signal wakes the waiters to look again. Called with p.mu held.
func (p *priority) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// scheduledWaits counts a scheduled probe in as waiting for a slot, until
// started or the returned func (safe to call more than once) is called.
func (p *priority) scheduledWaits() (gone func()) {
	p.mu.Lock()
	p.scheduled++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.scheduled--
			p.signal()
			p.mu.Unlock()
		})
	}
}

// admit waits until an on-demand probe may ask the pool for a slot: one is
// free (of size slots) and no scheduled probe waits. The returned func
// (safe to call more than once) ends the admission if the probe never took
// its slot.
func (p *priority) admit(ctx context.Context, slots func() int) (gone func(), err error) {
	p.mu.Lock()
	p.yielding++
	for p.scheduled > 0 || p.inUse+p.admitted >= slots() {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			p.mu.Lock()
			p.yielding--
			p.mu.Unlock()
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
	p.yielding--
	p.admitted++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.admitted--
			p.signal()
			p.mu.Unlock()
		})
	}, nil
}

// started moves a probe that was waiting (scheduled, or admitted on
// demand: the func its wait returned) into the slots in use; the returned
// func gives the slot back.
func (p *priority) started(waited func()) (done func()) {
	waited()
	p.mu.Lock()
	p.inUse++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.inUse--
		p.signal()
		p.mu.Unlock()
	}
}

// counts are what tests wait on.
func (p *priority) counts() (scheduled, inUse, yielding int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scheduled, p.inUse, p.yielding
}

package daemon

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// slot is one scheduled probe: the server and the generation of its schedule
// the slot was made for. A reload that changes or removes the server bumps
// the generation, and slots of an older one are dropped when they come due.
type slot struct {
	due  time.Time
	name string
	gen  uint64
	// calls marks a slot of one of the server's call schedules (its
	// callGroups[group]), whose generation is the server's callGen.
	calls bool
	group int
}

type slotHeap []slot

func (h slotHeap) Len() int           { return len(h) }
func (h slotHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h slotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)        { *h = append(*h, x.(slot)) }
func (h *slotHeap) Pop() any {
	old := *h
	n := len(old) - 1
	s := old[n]
	*h = old[:n]
	return s
}

// timetable is the one timer behind every schedule: a heap of slots and a
// goroutine that sleeps until the earliest. One timer for the whole fleet
// keeps the cost of scheduling flat as servers are added.
type timetable struct {
	mu    sync.Mutex
	slots slotHeap
	// firing counts the slots due has handed out and fired has not yet
	// taken back: while it is zero, every live schedule has its slot in
	// slots.
	firing int
	wake   chan struct{} // a slot earlier than the one slept on was added
}

func newTimetable() *timetable {
	return &timetable{wake: make(chan struct{}, 1)}
}

func (t *timetable) add(s slot) {
	t.fired(s, true, 0)
}

// fired ends the firing of n slots handed out by due and adds s, if ok:
// in one step, so that no one sees the timetable without the next slot of
// a schedule that was just fired.
func (t *timetable) fired(s slot, ok bool, n int) {
	t.mu.Lock()
	t.firing -= n
	first := false
	if ok {
		heap.Push(&t.slots, s)
		first = t.slots[0] == s
	}
	t.mu.Unlock()
	if first {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// due pops every slot due at now; each is firing until fired is called
// for it.
func (t *timetable) due(now time.Time) []slot {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []slot
	for len(t.slots) > 0 && !t.slots[0].due.After(now) {
		out = append(out, heap.Pop(&t.slots).(slot))
	}
	t.firing += len(out)
	return out
}

// earliest is the time of the next slot, or false when there is none.
func (t *timetable) earliest() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.slots) == 0 {
		return time.Time{}, false
	}
	return t.slots[0].due, true
}

// run calls fire for each slot as it comes due, until ctx is done. fire
// returns the next slot of the same server, if it has one.
func (t *timetable) run(ctx context.Context, fire func(slot) (slot, bool)) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		for _, s := range t.due(now) {
			next, ok := fire(s)
			t.fired(next, ok, 1)
		}
		wait := time.Hour
		if at, ok := t.earliest(); ok {
			wait = max(time.Until(at), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.wake:
		}
	}
}

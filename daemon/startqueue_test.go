package daemon

import (
	"slices"
	"testing"
)

// The queue starts probes in the order they came due, except that a stdio
// probe held back by the stdio bound never keeps an HTTP probe behind it
// from a shared slot; nothing starts past the overall bound.
func TestStartQueueOrder(t *testing.T) {
	var q startQueue
	push := func(name string, stdio bool) {
		q.seq++
		p := queuedProbe{s: &server{name: name}, stdio: stdio, seq: q.seq}
		if stdio {
			q.stdio.push(p)
		} else {
			q.http.push(p)
		}
	}
	push("s1", true)
	push("s2", true)
	push("h1", false)
	push("s3", true)
	push("h2", false)

	var got []string
	take := func(all, stdio int) bool {
		p, ok := q.next(all, stdio)
		if ok {
			got = append(got, p.s.name)
		}
		return ok
	}
	// Room for 4 probes, 1 of them stdio: s1, then h1 and h2 past the
	// stdio probes the bound holds back; then nothing, the stdio bound full.
	for take(4, 1) {
	}
	if want := []string{"s1", "h1", "h2"}; !slices.Equal(got, want) {
		t.Fatalf("started %v, want %v", got, want)
	}
	if q.running != 3 || q.runningStdio != 1 || q.queued() != 2 {
		t.Fatalf("running %d (stdio %d), queued %d; want 3 (1), 2", q.running, q.runningStdio, q.queued())
	}
	// s1 ends: s2 starts, and then the overall bound of 4 is full.
	q.ended(true)
	for take(4, 1) {
	}
	if want := []string{"s1", "h1", "h2", "s2"}; !slices.Equal(got, want) {
		t.Fatalf("started %v, want %v", got, want)
	}
	if take(5, 2) != true || got[len(got)-1] != "s3" || q.queued() != 0 {
		t.Fatalf("after room was made: started %v, %d queued; want s3 last and none queued", got, q.queued())
	}
}

// A queue that is never empty does not grow for good: once half of its
// array is popped, the rest moves to the front.
func TestFifoReusesItsArray(t *testing.T) {
	var f fifo
	for i := range 10_000 {
		f.push(queuedProbe{seq: uint64(2 * i)})
		f.push(queuedProbe{seq: uint64(2*i + 1)})
		if p := f.pop(); p.seq != uint64(i) {
			t.Fatalf("popped %d, want %d: out of order", p.seq, i)
		}
	}
	if f.len() != 10_000 {
		t.Fatalf("len %d, want 10000", f.len())
	}
	// Without the move, the array would hold the 10,000 popped places too.
	if n := len(f.items); n >= 2*f.len() {
		t.Errorf("an array of %d places for a queue of %d: the popped half was never let go", n, f.len())
	}
	for want := uint64(10_000); f.len() > 0; want++ {
		if p := f.pop(); p.seq != want {
			t.Fatalf("popped %d, want %d: out of order", p.seq, want)
		}
	}
	if f.head != 0 || len(f.items) != 0 {
		t.Errorf("an empty queue keeps head %d, %d items", f.head, len(f.items))
	}
}

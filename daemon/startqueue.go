package daemon

import (
	"sync"
	"time"
)

// startQueue holds the scheduled probes that are due but would only wait
// for a slot of the pool, and gives each a goroutine once the pool has a
// slot for it. A goroutine waiting for its slot costs far more than its
// place here: Go starts a goroutine with the average stack of those before
// it (tens of kB for a probe's), and its probe would build its target
// before waiting. When 100,000 servers came due in the first round, their
// waiting goroutines held 3 GB; their places here take 6 MB.
//
// It starts probes in the order they came due, stdio ones while the stdio
// bound has room, so that stdio probes waiting on their bound never keep an
// HTTP probe from a shared slot (as in the pool itself). It counts the
// goroutines it started that have not ended: the pool still bounds the
// probes, and an on-demand probe may take a shared slot first, in which
// case a started probe waits for its slot there, briefly. It is the
// daemon's, not the pool's: a reload that changes the bounds replaces the
// pool (runner.Pool's bounds are fixed), and the probes waiting here must
// outlive that.
type startQueue struct {
	mu           sync.Mutex
	http, stdio  fifo
	seq          uint64 // order of arrival across both queues
	running      int    // goroutines started and not ended
	runningStdio int    // of which stdio probes
}

// queuedProbe is a scheduled probe of s, its flight registered.
type queuedProbe struct {
	s     *server
	f     *flight
	due   time.Time
	stdio bool
	seq   uint64
	// waits ends the probe's count among the scheduled probes waiting for a
	// slot (priority.scheduledWaits), which on-demand probes yield to.
	waits func()
}

// fifo is a queue of probes in order of arrival.
type fifo struct {
	items []queuedProbe
	head  int
}

func (q *fifo) push(p queuedProbe) { q.items = append(q.items, p) }

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) peek() *queuedProbe { return &q.items[q.head] }

func (q *fifo) pop() queuedProbe {
	p := q.items[q.head]
	q.items[q.head] = queuedProbe{} // let the server go
	q.head++
	if q.head == len(q.items) {
		// Empty: start over at the front, keeping the array.
		q.items, q.head = q.items[:0], 0
	} else if q.head >= 1024 && q.head*2 >= len(q.items) {
		// Half of the array is popped: move the rest to the front, so a
		// queue that is never empty does not grow for good.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return p
}

// enqueue puts a scheduled probe of s in the queue; its flight f is
// registered. Call startQueued after.
func (d *Daemon) enqueue(s *server, f *flight, due time.Time, stdio bool) {
	q := &d.starts
	waits := d.prio.scheduledWaits()
	q.mu.Lock()
	q.seq++
	p := queuedProbe{s: s, f: f, due: due, stdio: stdio, seq: q.seq, waits: waits}
	if stdio {
		q.stdio.push(p)
	} else {
		q.http.push(p)
	}
	q.mu.Unlock()
}

// startQueued starts the queued probes the pool has room for, each on its
// own goroutine. Once the daemon is closing, it ends every queued probe's
// flight instead. Called after anything that may make room: a probe
// queued, a probe ended, the pool resized.
func (d *Daemon) startQueued() {
	d.mu.RLock()
	all, stdio := d.pool.Sizes()
	d.mu.RUnlock()
	for {
		p, ok := d.starts.next(all, stdio)
		if !ok {
			return
		}
		if !d.enter() {
			d.starts.ended(p.stdio)
			p.waits()
			p.s.endFlight(p.f, nil, false)
			continue
		}
		go d.runQueued(p)
	}
}

// next takes the probe to start next, counted as running, if there is one
// and room for it: the one that arrived first of the HTTP queue's head and,
// while the stdio bound has room, the stdio queue's.
func (q *startQueue) next(all, stdio int) (queuedProbe, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running >= all {
		return queuedProbe{}, false
	}
	from := &q.http
	switch {
	case q.stdio.len() > 0 && q.runningStdio < stdio && (q.http.len() == 0 || q.stdio.peek().seq < q.http.peek().seq):
		from = &q.stdio
	case q.http.len() == 0:
		return queuedProbe{}, false
	}
	p := from.pop()
	q.running++
	if p.stdio {
		q.runningStdio++
	}
	return p, true
}

// ended counts a started probe out.
func (q *startQueue) ended(stdio bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	if stdio {
		q.runningStdio--
	}
}

// queued returns how many probes wait in the queue.
func (q *startQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.http.len() + q.stdio.len()
}

// runQueued runs a probe the queue started, and then starts the next.
func (d *Daemon) runQueued(p queuedProbe) {
	defer d.wg.Done()
	res, recorded := d.probe(p.s.ctx, p.s, probeRun{trigger: triggerSchedule, scheduled: p.due, waits: p.waits})
	p.s.endFlight(p.f, res, recorded)
	d.starts.ended(p.stdio)
	d.startQueued()
}

package issuer

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// DefaultInterval is how often one credential is asked about when nothing
// says otherwise: a credential revoked now is named within it, and a
// service asked four times an hour notices no load.
const DefaultInterval = 15 * time.Minute

// Backoff bounds: an unreachable service is asked again sooner than the
// interval (from minRetry, doubling), a service that asked to slow down
// no sooner than it said, nor than the interval.
const (
	minRetry = time.Minute
	maxEntry = 4 // intervals an entry unused is kept
)

// Checker asks about each credential once, shared by every server and
// probe that uses it, at most every Interval: its answer is kept and
// handed to every probe until the next is due. Safe for concurrent use;
// the zero value is not: use NewChecker.
type Checker struct {
	client   *http.Client
	interval time.Duration
	version  string
	now      func() time.Time

	// asked, when set, is told of every answer a service gave (each
	// request made): the count of what mcpwatch asks.
	asked func(service string, v probe.IssuerVerdict)

	mu      sync.Mutex
	entries map[[32]byte]*entry
	swept   time.Time
}

// OnAsked has f told of every check made (one request to a service), with
// the service's ID and its answer; set before the first check.
func (c *Checker) OnAsked(f func(service string, v probe.IssuerVerdict)) { c.asked = f }

// entry is one credential's last answer and when to ask again.
type entry struct {
	last  probe.IssuerCheck
	known bool // last holds an answer
	due   time.Time
	used  time.Time
	// fails counts answers in a row that were not the service's word on
	// the credential, of one kind (unreachable, or limited): the retry
	// backs off.
	fails    int
	failKind probe.IssuerVerdict
	flight   chan struct{} // a check under way: closed when it ends
}

// NewChecker is a Checker asking with client (NewClient's when nil) at
// most every interval (DefaultInterval when 0); version goes into the
// User-Agent.
func NewChecker(client *http.Client, interval time.Duration, version string) *Checker {
	if client == nil {
		client = NewClient()
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Checker{client: client, interval: interval, version: version, now: time.Now, entries: map[[32]byte]*entry{}}
}

// SetInterval changes how often one credential is asked about (a reload
// of the configuration); 0 keeps it. A kept answer's next check stays when
// it was due.
func (c *Checker) SetInterval(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.interval = d
	c.mu.Unlock()
}

// Check is t's last answer, asked anew when it is due (the first time,
// an interval after the last answer, or sooner after an unreachable
// service); a check of the same credential under way is waited for, not
// made twice. ctx bounds the wait and the check.
func (c *Checker) Check(ctx context.Context, t Tie) probe.IssuerCheck {
	if t.Skip != "" {
		return Check(ctx, c.client, t, c.version) // sends nothing
	}
	key := sha256.Sum256([]byte(t.key()))
	for {
		c.mu.Lock()
		now := c.now()
		c.sweep(now)
		e := c.entries[key]
		if e == nil {
			e = &entry{}
			c.entries[key] = e
		}
		e.used = now
		if e.known && now.Before(e.due) {
			last := e.last
			c.mu.Unlock()
			return relabel(last, t)
		}
		if f := e.flight; f != nil {
			c.mu.Unlock()
			select {
			case <-f:
				continue
			case <-ctx.Done():
				return c.unanswered(e, t)
			}
		}
		f := make(chan struct{})
		e.flight = f
		c.mu.Unlock()

		res := Check(ctx, c.client, t, c.version)
		if c.asked != nil {
			c.asked(t.Service.ID, res.Verdict)
		}

		c.mu.Lock()
		e.flight = nil
		close(f)
		if ctx.Err() != nil && res.Verdict == Unreachable && e.known {
			// The caller gave up (its probe's deadline), not the service:
			// the last answer stands.
			last := e.last
			c.mu.Unlock()
			return relabel(last, t)
		}
		c.record(e, res, c.now())
		last := e.last
		c.mu.Unlock()
		return relabel(last, t)
	}
}

// unanswered is what a caller that stopped waiting gets: the last answer,
// or none yet.
func (c *Checker) unanswered(e *entry, t Tie) probe.IssuerCheck {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.known {
		return relabel(e.last, t)
	}
	return probe.IssuerCheck{Credential: t.Credential, Service: t.Service.ID, Endpoint: t.Endpoint(),
		Verdict: Unknown, Note: "the check did not end before the probe's deadline"}
}

// record keeps an answer and sets when to ask again.
func (c *Checker) record(e *entry, res probe.IssuerCheck, now time.Time) {
	next := c.interval
	if res.Verdict != e.failKind {
		e.fails, e.failKind = 0, res.Verdict
	}
	switch res.Verdict {
	case Unreachable:
		e.fails++
		next = min(minRetry<<min(e.fails-1, 6), c.interval)
	case Limited:
		e.fails++
		wait := time.Duration(res.RetryAfter * float64(time.Second))
		next = max(wait, c.interval<<min(e.fails-1, 4))
	}
	if res.Verdict == Limited && e.known && (e.last.Verdict == Accepted || e.last.Verdict == Rejected) {
		// The service's last word on the credential stands while it asks
		// to slow down.
		kept := e.last
		kept.Note = "the service asked to slow down; its last answer stands"
		res = kept
	}
	e.last, e.known, e.due = res, true, now.Add(next)
}

// relabel is a kept answer for another server's tie of the same
// credential: its own name for it.
func relabel(r probe.IssuerCheck, t Tie) probe.IssuerCheck {
	r.Credential = t.Credential
	r.MissingScopes = nil
	if r.Verdict == Accepted && r.Scopes != nil {
		for _, need := range t.Scopes {
			if !containsFold(r.Scopes, need) {
				r.MissingScopes = append(r.MissingScopes, need)
			}
		}
	}
	return r
}

// sweep drops entries no probe asked for in maxEntry intervals (a
// credential rotated, a server removed), at most once an interval.
func (c *Checker) sweep(now time.Time) {
	if now.Sub(c.swept) < c.interval {
		return
	}
	c.swept = now
	for k, e := range c.entries {
		if e.flight == nil && now.Sub(e.used) > maxEntry*c.interval {
			delete(c.entries, k)
		}
	}
}

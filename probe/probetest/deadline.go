package probetest

import "time"

// growAttempts is how many deadlines UpWithin tries: the first, and four
// times twice the last (31 times the first in all).
const growAttempts = 5

// UpWithin is for a test of a probe's deadline that needs the server under
// it to get somewhere first: the Unresponsive grandchild started, a write
// of the probe's blocked, a slow start past a sub-deadline. The deadline
// cannot wait for that, being the very thing under test, and on a loaded
// machine a -race test server can take longer than the deadline just to
// start: the probe then rightly kills it before it got there, which proves
// the deadline and nothing of what the test is about.
//
// UpWithin calls attempt with the deadline first, then with twice the last
// one, until attempt reports that the server got where the test needs it
// before its deadline (up), at most five times. attempt starts its own
// server and probe and checks everything else of them itself, at every
// deadline. UpWithin returns the last deadline tried and whether the server
// was up by it; a test fails when it never was, as even a loaded machine
// starts a server within 16 times the first deadline.
func UpWithin(first time.Duration, attempt func(deadline time.Duration) (up bool)) (last time.Duration, up bool) {
	last = first
	for i := range growAttempts {
		if i > 0 {
			last *= 2
		}
		if attempt(last) {
			return last, true
		}
	}
	return last, false
}

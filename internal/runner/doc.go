// Package runner probes one configured server once: it expands the
// server's target now (so rotated secrets are read afresh), waits for a
// slot in a Pool, probes within the server's deadline (which starts when
// the probe starts, not while it waits), and judges what the probe saw in
// one step (judge): the server's secret values are scrubbed from
// everything the server said back (a Scrubber, given them as Secrets)
// before anything is derived from it (the lock diff, the lock itself), the
// tools' schemas are fingerprinted on request within the same deadline,
// and the result is read once for a rejected credential, an unreachable
// service or an install that outlasted the first start.
//
// The daemon (on a schedule) and the preflight (once, for CI) both probe
// through it, so they build targets, bound concurrency, time out and scrub
// alike. It knows nothing of schedules, reports or metrics.
package runner

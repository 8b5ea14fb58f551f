// Package runner probes one configured server once: it expands the
// server's target now (so rotated secrets are read afresh), waits for a
// slot in a Pool, probes within the server's deadline (which starts when
// the probe starts, not while it waits), and scrubs the server's secret
// values from everything the server said back, before the caller derives
// anything from it (the lock diff, the lock itself); on request it also
// fingerprints the tools' schemas within the same deadline.
//
// The daemon (on a schedule) and the preflight (once, for CI) both probe
// through it, so they build targets, bound concurrency, time out and scrub
// alike. It knows nothing of schedules, reports or metrics.
package runner

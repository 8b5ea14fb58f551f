// Package daemon is the long-running side of mcpwatch: it probes every
// configured MCP server on its schedule through a bounded pool, compares each
// observation with the lock, keeps the latest status and a short history per
// server, reloads its configuration without dropping a working one, and
// serves metrics, a status page, a JSON API and health endpoints over HTTP.
//
// Each server is judged once, when a probe (with its canary calls), a
// change of the lock or a change of its contracts is recorded, and the
// judgement is kept in its status (package status) and its history: the
// status page, the JSON API, the logs, /probe and the metrics read it and
// derive no state of their own.
//
// A Daemon owns every goroutine it starts: Close cancels them all (running
// probes included, which kills their process groups) and waits for them.
//
// Every result it keeps, shows or logs has the server's secret values
// scrubbed from it, and so does every diff derived from it (package runner
// probes and scrubs before anything is compared with the lock). Schema
// fingerprints are computed within the probe's deadline, or, for a lock
// that gains them between probes, outside every lock of the daemon.
//
// It does not speak MCP (package probe does), build targets or bound
// concurrency (runner), parse configuration (config), diff tool surfaces
// (lockstore) or name metrics (metrics).
package daemon

// Package daemon is the long-running side of mcpwatch: it probes every
// configured MCP server on its schedule through a bounded pool, compares each
// observation with the lock, keeps the latest status and a short history per
// server, reloads its configuration without dropping a working one, and
// serves metrics, a status page, a JSON API and health endpoints over HTTP.
//
// A Daemon owns every goroutine it starts: Close cancels them all (running
// probes included, which kills their process groups) and waits for them.
//
// Every result it keeps, shows or logs has the server's secret values
// scrubbed from it (package runner probes and scrubs; the lock is compared
// with the tools as the server listed them).
//
// It does not speak MCP (package probe does), build targets or bound
// concurrency (runner), parse configuration (config), diff tool surfaces
// (lockstore) or name metrics (metrics).
package daemon

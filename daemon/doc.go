// Package daemon is the long-running side of mcpwatch: it probes every
// configured MCP server on its schedule through a bounded pool, compares each
// observation with the lock, keeps the latest status and a short history per
// server, reloads its configuration without dropping a working one, and
// serves metrics, a status page, a JSON API and health endpoints over HTTP.
//
// A Daemon owns every goroutine it starts: Close cancels them all (running
// probes included, which kills their process groups) and waits for them.
//
// It does not speak MCP (package probe does), parse configuration (config),
// diff tool surfaces (lockstore) or name metrics (metrics).
package daemon

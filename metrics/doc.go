// Package metrics is the Prometheus side of mcpwatch: it renders the daemon's
// latest probe results as metrics at scrape time, and holds mcpwatch's own
// metrics (build, reload, probes in flight, scheduling lag).
//
// It never probes and never schedules: a scrape only reads the statuses the
// daemon keeps, so scraping is cheap and never reaches an MCP server. The
// per-server series are written straight to the text exposition format from
// the current statuses at every scrape (TextWriter), with no metric objects
// in between, so a scrape of thousands of servers stays cheap, and a server
// or a locked tool removed from the configuration or the lock leaves no
// stale series; the same writer writes OpenMetrics, and protobuf goes
// through expfmt's encoder (Handler negotiates the format with expfmt).
// mcpwatch's own metrics live in a registry of their own; Handler serves
// both. Nothing is registered on the global registry.
package metrics

// Package preflight is the one-shot face of mcpwatch: it probes the
// configured MCP servers once, in parallel, compares what each offers with
// the lock, and says in a Report whether an agent may start, and if not,
// which tool is gone from which server and why.
//
// It renders that report for people (text), for machines (JSON, the
// receipt), for CI (JUnit XML, GitHub step summary and annotations), and
// plans a relock (Relock) that never turns a failed or empty probe into an
// expectation.
//
// It does not parse flags, pick exit codes or write the lock: the CLI does.
// Every string it renders has the server's secret values scrubbed from it
// (package runner probes and scrubs: expanded env and header values, and
// what ${...} references put into the arguments and the URL, before any
// diff, verdict or lock entry is derived from what the server said), and the
// configuration it shows is config's redacted form, so no output carries a
// secret even when a server echoes one.
package preflight

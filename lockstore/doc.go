// Package lockstore reads, writes and compares mcpwatch's lock: the tool
// surface each MCP server is expected to offer, committed to the repository
// and reviewed by a person.
//
// # Format
//
// A lock is one JSON object whose keys are server names, and nothing else: no
// version or "$schema" key, because the Python preflight (a script that
// compares .mcp.json's servers with the lock; see FORMAT.md) treats every
// key as a server. Each value is one of two forms, mixed freely per server:
//
//	{
//	  "report": [
//	    "fetch_daily_report",
//	    "list_report_dates"
//	  ],
//	  "search": {
//	    "query": {"description": "sha256:…", "schema": "sha256:…"},
//	    "suggest": {"description": "sha256:…", "schema": "sha256:…"}
//	  }
//	}
//
// The list form is the Python preflight's (names only, sorted) and is written byte for
// byte as Python's json.dump(lock, f, indent=2, sort_keys=True) writes it.
// The object form is keyed by tool name, one tool per line, each with the
// Fingerprint of its input schema and the DescriptionHash of its description
// (either may be left out; {} locks the name only). The Python preflight iterates
// a dict's keys, so it still reads the tool names from the object form.
//
// Servers read from a file and left unchanged are written back with their
// original bytes, so relocking one server changes only that server's lines.
// The file ends with a newline unless it was read without one. See FORMAT.md
// for the full rules.
//
// # What it does not do
//
// It does not probe servers, decide exit codes or print verdicts: Compare
// returns a Diff, and the caller decides what fails (missing and forbidden
// tools always; extra tools and changed fingerprints under --strict). It does
// not lock against concurrent writers: two writers each replace the file
// whole, and the last rename wins.
package lockstore

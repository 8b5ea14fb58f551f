package preflight

import (
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// ReportKind names the JSON shape of a Report (the --format json output and
// the receipt), so a reader can tell a later, changed shape apart.
const ReportKind = "mcpwatch.preflight"

// Report is the outcome of one preflight run. It is what --format json
// prints and what a receipt records.
type Report struct {
	Kind     string          `json:"kind"`
	Version  string          `json:"mcpwatch_version"`
	Started  time.Time       `json:"started"`
	Duration jsondoc.Seconds `json:"duration_seconds"`
	OK       bool            `json:"ok"`
	Strict   bool            `json:"strict"`
	Config   string          `json:"config,omitempty"` // the file the servers were read from
	Lock     string          `json:"lock,omitempty"`
	// Error is why no server was probed at all: the configuration or the
	// lock is unusable. Servers is empty then.
	Error   string         `json:"error,omitempty"`
	Totals  Totals         `json:"totals"`
	Servers []ServerReport `json:"servers"`
	// Skipped names the servers left out on purpose (--skip, ignore:):
	// neither probed nor judged.
	Skipped []string `json:"skipped,omitempty"`
}

// Totals count what a run saw.
type Totals struct {
	Servers       int `json:"servers"`
	Failed        int `json:"failed"`
	ToolsLocked   int `json:"tools_locked"`
	ToolsVerified int `json:"tools_verified"` // locked tools seen on servers that answered
	ToolsSeen     int `json:"tools_seen"`
	Calls         int `json:"calls"`        // contracts run
	CallsFailed   int `json:"calls_failed"` // of which failed
}

// ServerReport is one server's part of a run.
type ServerReport struct {
	Name     string       `json:"name"`
	Verdict  verdict.Kind `json:"verdict"` // verdict.KindOK or the kind of the first failing problem
	Failed   bool         `json:"failed"`
	Problems []Problem    `json:"problems,omitempty"`
	// Server is how the server is reached, with secrets redacted; nil for a
	// server that is only in the lock.
	Server  *config.RedactedServer `json:"config,omitempty"`
	Timeout jsondoc.Seconds        `json:"timeout_seconds,omitempty"` // the probe's deadline, its calls' included
	// Probe is what the probe observed (handshake, versions, tools with
	// their schemas, timings), scrubbed of the server's secret values; nil
	// for a server that is only in the lock.
	Probe *probe.Result  `json:"probe,omitempty"`
	Diff  lockstore.Diff `json:"lock_diff"`
	// Calls are the server's contracts as check ran them, in the order
	// of their tools; absent when it has none.
	Calls []CallReport `json:"calls,omitempty"`
}

// Problem is one finding on one server.
type Problem struct {
	Kind    verdict.Kind `json:"kind"`
	Fails   bool         `json:"fails"`
	Message string       `json:"message"`         // one line: "2/2 tools missing -> a, b"
	Tools   []string     `json:"tools,omitempty"` // the tools it is about, sorted
	// Details are further lines for people: the stderr tail of a failed
	// server, the locked tools a failed probe could not verify.
	Details []string `json:"details,omitempty"`
}

// Failures returns the problems that fail the server.
func (s ServerReport) Failures() []Problem {
	var out []Problem
	for _, p := range s.Problems {
		if p.Fails {
			out = append(out, p)
		}
	}
	return out
}

// Notes returns the problems reported without failing.
func (s ServerReport) Notes() []Problem {
	var out []Problem
	for _, p := range s.Problems {
		if !p.Fails {
			out = append(out, p)
		}
	}
	return out
}

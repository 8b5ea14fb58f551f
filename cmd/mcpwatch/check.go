package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/prometheus/common/version"
	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
)

const checkHelp = `Usage:
  mcpwatch check [flags]

Probes the configured MCP servers once, in parallel, each within its own
deadline, and compares the tools each offers with the lock: the CI
preflight, and the step before an unattended agent starts.

  report: 2/2 tools missing -> fetch_daily_report, list_report_dates
      if they were removed on purpose, accept it with 'mcpwatch lock --server report' (drops them from the lock)

A locked tool that is missing fails; so do a server that cannot be probed
(with the reason and the last lines of its stderr), a tool matching a
forbid pattern, and a locked server the configuration no longer defines.
An extra tool passes and is reported. --strict also fails extra tools,
changed schema or description fingerprints, and servers not in the lock.

A server with contracts (contracts: or calls: in mcpwatch.yml, an
mcp-probe toolsFile) has each contracted tool called once the tools are
listed, in the same session, with its retry policy: a call that breaks
its contract fails, naming the tool, the assertion and what came back.
Only tools annotated readOnlyHint: true are called unless the contract
allows side effects, and a destructive one needs allow_destructive_calls.
With --strict (or --fail-on-warn, as mcp-probe names it) a contract that
needed a retry fails too, and so does an incomplete coverage, as mcp-probe
counts it: an expected tool (an mcp-probe config's expectedTools) without
a contract in the server's contracts file, or, without expectedTools, a
contracted tool whose input still has "<fill in ...>" values.

With no --config.file it reads ./mcpwatch.yml if there is one, else
./.mcp.json (or $MCP_CONFIG) with the lock ./mcp-tools.lock.json (or
$MCP_TOOL_LOCK) and the timeout $MCP_PROBE_TIMEOUT_S: the files and
variables of a preflight script that reads .mcp.json and a tool lock, so
mcpwatch drops in where one ran. --config.file may also name a client
config (.mcp.json, claude_desktop_config.json, .vscode/mcp.json).

One broken server need not block the others: --skip NAME (repeatable)
leaves it out, and ignore: [NAME] in mcpwatch.yml does so for every run
(a --server naming it probes it anyway). Skipped servers are listed, not
judged. A configured server with no lock entry is reported as not locked
yet, with the 'mcpwatch lock --server NAME' that locks it.

Each server's protocol era is remembered in a cache file beside the lock
(.mcp-tools.lock.json.era), so that the next run skips detection; a wrong
entry is detected again in the same run. --era sets every server's era and
ignores the cache. Stdio servers get a minimal environment plus their own
env, as MCP clients give them; --inherit-env passes the whole environment.

Probes run at once up to defaults.concurrency, stdio servers up to
defaults.stdio_concurrency (mcpwatch.yml); the servers of a client config
are all started at once, as the client starts them.

Formats: text (for people); json (the full report); junit (JUnit XML, one
testcase per server and one per contract); github (text and ::error annotations on stdout, and
a Markdown summary appended to $GITHUB_STEP_SUMMARY or written to
--output). --output names the file the format goes to; with json and
junit the text goes to stdout besides. --receipt writes a JSON record of everything observed (handshake,
versions, tools and schemas, timings, verdicts), with no secret in it.

Exit codes: 0 every locked tool is present; 78 a locked tool is missing, a
server could not be probed, a forbidden tool is offered, a contract
failed, the lock is
missing or unreadable, or the configuration is unusable; 1 an output file
could not be written; 2 usage error; 130 interrupted.

Flags:
%s
Examples:
  mcpwatch lock && git add mcp-tools.lock.json     # record today's surface
  mcpwatch check                                   # then, before every run
  mcpwatch check --format junit --output mcp-preflight.xml --receipt mcp-receipt.json
  mcpwatch check --format github --strict --server report
  mcpwatch check --skip flaky                      # all but one broken server
`

type checkFlags struct {
	preflightFlags
	receipt string
	strict  bool
}

func newCheckFlagSet(f *checkFlags) *pflag.FlagSet {
	fs := newFlagSet("check")
	addPreflightFlags(fs, &f.preflightFlags)
	addOutputFlags(fs, &f.out, "write the report (github: the Markdown summary) to this `file` instead of stdout", formatNames(checkFormats))
	fs.StringVar(&f.receipt, "receipt", "", "write a redacted JSON receipt of everything observed to this `file`")
	fs.BoolVar(&f.strict, "strict", false, "also fail on extra tools, changed fingerprints, servers not in the lock, retried calls and tools without a contract")
	fs.BoolVar(&f.strict, "fail-on-warn", false, "the same as --strict (mcp-probe's name for it)")
	addEraFlags(fs, &f.eras)
	return fs
}

func cmdCheck(ctx context.Context, c *cli, args []string) int {
	var f checkFlags
	fs := newCheckFlagSet(&f)
	if code, ok := parseArgs(c, fs, checkHelp, args, func() error { return f.preflightFlags.check(fs) }); !ok {
		return code
	}

	started := time.Now()
	var report *preflight.Report
	setup, err := loadPreflight(c, f.configFile, f.lockFile)
	if err == nil {
		err = setup.readLock(true)
		if uerr := setup.selectServers(&f.preflightFlags, true); uerr != nil {
			fmt.Fprintf(c.stderr, "mcpwatch check: %v\n", uerr)
			return exitUsage
		}
	}
	if err != nil {
		report = preflight.Failed(err, setup.source, setup.lockPath, version.Version, started)
		report.Strict = f.strict
	} else {
		opts := setup.options(c, f.timeout, f.noIssuer)
		opts.Strict = f.strict
		saveEras := f.eras.apply(setup.cfg, setup.lockPath, &opts)
		report = preflight.Check(ctx, preflight.Input{
			Config: setup.cfg, ConfigSource: setup.source,
			Lock: setup.lock, LockPath: setup.lockPath, Servers: f.servers, Skip: setup.skip,
		}, opts)
		saveEras()
	}

	code := exitOK
	if !report.OK {
		code = exitConfig
	}
	if werr := writeCheckOutputs(c, &f, report); werr != nil {
		fmt.Fprintf(c.stderr, "mcpwatch check: %v\n", werr)
		if code == exitOK {
			code = exitFailed
		}
	}
	if ctx.Err() != nil {
		return exitSignals
	}
	return code
}

// checkFormats are check's output formats: each writes the report where
// its format goes. A new format is one entry.
var checkFormats = map[string]func(*checkWriter){
	preflight.FormatText: func(w *checkWriter) { w.output(preflight.WriteText) },
	preflight.FormatJSON: func(w *checkWriter) {
		w.output(preflight.WriteJSON)
		w.besideFile(preflight.WriteText)
	},
	preflight.FormatJUnit: func(w *checkWriter) {
		w.output(preflight.WriteJUnit)
		w.besideFile(preflight.WriteText)
	},
	// Text and ::error annotations on stdout; the Markdown summary to
	// --output, else appended to $GITHUB_STEP_SUMMARY when set.
	preflight.FormatGitHub: func(w *checkWriter) {
		w.stdout(preflight.WriteText)
		w.stdout(preflight.WriteAnnotations)
		w.summary(preflight.WriteMarkdown)
	},
}

// checkWriter writes one report to the places its format names. It goes
// on after a failed write so that one unwritable path does not cost the
// others, and keeps the errors.
type checkWriter struct {
	c    *cli
	file string // --output, "" for none
	r    *preflight.Report
	errs []error
}

// output writes to --output when given, else to stdout.
func (w *checkWriter) output(write func(io.Writer, *preflight.Report) error) {
	if w.file != "" {
		w.toFile(w.file, write)
	} else {
		w.stdout(write)
	}
}

// besideFile writes to stdout when the format went to --output.
func (w *checkWriter) besideFile(write func(io.Writer, *preflight.Report) error) {
	if w.file != "" {
		w.stdout(write)
	}
}

func (w *checkWriter) stdout(write func(io.Writer, *preflight.Report) error) {
	if err := write(w.c.stdout, w.r); err != nil {
		w.errs = append(w.errs, fmt.Errorf("write to stdout: %w", err))
	}
}

func (w *checkWriter) toFile(path string, write func(io.Writer, *preflight.Report) error) {
	var buf bytes.Buffer
	if err := write(&buf, w.r); err != nil {
		w.errs = append(w.errs, err)
		return
	}
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		w.errs = append(w.errs, err) // it names the file
	}
}

// summary writes to --output when given, else appends to
// $GITHUB_STEP_SUMMARY when it is set.
func (w *checkWriter) summary(write func(io.Writer, *preflight.Report) error) {
	switch path := w.c.getenv("GITHUB_STEP_SUMMARY"); {
	case w.file != "":
		w.toFile(w.file, write)
	case path != "":
		if err := appendSummary(path, w.r, write); err != nil {
			w.errs = append(w.errs, err)
		}
	}
}

// writeCheckOutputs writes the report in the chosen format, and the
// receipt; the first error is returned.
func writeCheckOutputs(c *cli, f *checkFlags, r *preflight.Report) error {
	w := &checkWriter{c: c, file: f.out.output, r: r}
	checkFormats[f.out.format](w)
	if f.receipt != "" {
		if err := preflight.WriteReceipt(f.receipt, r); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", f.receipt, err))
		}
	}
	if len(w.errs) > 0 {
		return w.errs[0]
	}
	return nil
}

// appendSummary appends the summary to $GITHUB_STEP_SUMMARY, which other
// steps write to as well: appended, never replaced.
func appendSummary(path string, r *preflight.Report, write func(io.Writer, *preflight.Report) error) error {
	var buf bytes.Buffer
	if err := write(&buf, r); err != nil {
		return err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600) //nolint:gosec // G304: the step summary file GitHub Actions names in $GITHUB_STEP_SUMMARY
	if err != nil {
		return fmt.Errorf("open $GITHUB_STEP_SUMMARY: %w", err)
	}
	_, err = file.Write(buf.Bytes())
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write $GITHUB_STEP_SUMMARY: %w", err)
	}
	return nil
}

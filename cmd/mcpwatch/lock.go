package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

const lockHelp = `Usage:
  mcpwatch lock [flags]

Probes the configured servers once and writes the tools each offers to the
lock, the expected surface 'mcpwatch check' compares with. Review the
change it prints, and commit the lock: regenerating it unread would let a
tool disappear and the lock follow it down.

It refuses, naming each server and why, and leaves the lock as it was,
when any probe failed (a failed observation is never an expectation), when
a server lists no tools, unless --allow-empty (a missing credential looks
exactly like an empty list), and when the lock file changed while the
servers were probed (writing would drop that change). With --server it
relocks only those servers and keeps every other server's lines byte for
byte; without, the lock holds exactly the configured servers. --skip NAME
(repeatable) and ignore: [NAME] in mcpwatch.yml leave a server out: it is
not probed and its lock entry is kept as it is, so one broken server does
not stop the others from being locked.

The lock is plain JSON, {"server": ["tool_a", "tool_b"]}, the format a
preflight script that reads .mcp.json and a tool lock would use too.
--fingerprints also records each tool's input-schema fingerprint and
description hash, so 'mcpwatch check --strict' catches a changed schema; a
server locked with them keeps them.

--format json writes what happened (written, unchanged, refused, with
each refusal and change) for scripts; --output writes it to a file.
Configuration as for 'mcpwatch check' (see its --help).

Exit codes: 0 written, or unchanged; 78 refused, or the configuration or
the old lock is unusable; 1 the lock could not be written; 2 usage error;
130 interrupted.

Flags:
%s`

type lockFlags struct {
	preflightFlags
	allowEmpty   bool
	fingerprints bool
}

func newLockFlagSet(f *lockFlags) *pflag.FlagSet {
	fs := newFlagSet("lock")
	addPreflightFlags(fs, &f.preflightFlags)
	addOutputFlags(fs, &f.out, "write the outcome to this `file` instead of stdout", formatNames(lockFormats))
	fs.BoolVar(&f.allowEmpty, "allow-empty", false, "lock a server that lists no tools as offering none")
	fs.BoolVar(&f.fingerprints, "fingerprints", false, "also lock each tool's input-schema fingerprint and description hash")
	addEraFlags(fs, &f.eras)
	return fs
}

// lockOutcome is what one 'mcpwatch lock' did: the --format json output,
// and what the text is written from.
type lockOutcome struct {
	Kind     string          `json:"kind"`
	Lock     string          `json:"lock"`
	Config   string          `json:"config,omitempty"`
	Outcome  string          `json:"outcome"` // written, unchanged, refused, interrupted or failed
	Error    string          `json:"error,omitempty"`
	Servers  int             `json:"servers_probed"`
	Duration jsondoc.Seconds `json:"duration_seconds"`
	// Refused names each server that could not be locked now, and why.
	Refused []preflight.Refusal `json:"refused,omitempty"`
	Changes []lockChange        `json:"changes,omitempty"`
	Skipped []string            `json:"skipped,omitempty"`
	Summary string              `json:"summary,omitempty"` // "2 tools of 1 server": what the lock holds now

	code int
}

type lockChange struct {
	lockstore.Change
	Note string `json:"note,omitempty"` // "new server", "server no longer configured: dropped"
}

func cmdLock(ctx context.Context, c *cli, args []string) int {
	var f lockFlags
	fs := newLockFlagSet(&f)
	if code, ok := parseArgs(c, fs, lockHelp, args, func() error { return f.preflightFlags.check(fs) }); !ok {
		return code
	}

	setup, err := loadPreflight(c, f.configFile, f.lockFile)
	if err == nil {
		if err = setup.readLock(false); err != nil {
			err = fmt.Errorf("%w\nthe old lock must be readable to relock: fix it, or move it away to start afresh", err)
		}
	}
	if err == nil {
		if uerr := setup.selectServers(&f.preflightFlags, false); uerr != nil {
			fmt.Fprintf(c.stderr, "mcpwatch lock: %v\n", uerr)
			return exitUsage
		}
	}
	o := relock(ctx, c, &f, setup, err)
	if o.Outcome == "failed" {
		fmt.Fprintf(c.stderr, "mcpwatch lock: %s\n", o.Error)
	}
	if werr := writeOutput(c, &f.out, lockFormats, o); werr != nil {
		fmt.Fprintf(c.stderr, "mcpwatch lock: %v\n", werr)
		if o.code == exitOK {
			return exitFailed
		}
	}
	return o.code
}

// relock probes and writes the lock, unless setupErr or what the probes
// saw forbids it.
func relock(ctx context.Context, c *cli, f *lockFlags, setup *preflightSetup, setupErr error) *lockOutcome {
	o := &lockOutcome{Kind: "mcpwatch.lock", Lock: setup.lockPath, Config: setup.source, Skipped: setup.skip}
	refuse := func(err error) *lockOutcome {
		o.Outcome, o.Error, o.code = "refused", err.Error(), exitConfig
		return o
	}
	if setupErr != nil {
		return refuse(setupErr)
	}

	opts := setup.options(c, f.timeout, f.noIssuer)
	saveEras := f.eras.apply(setup.cfg, setup.lockPath, &opts)
	servers := setup.probed(f.servers)
	started := time.Now()
	observations := preflight.Observe(ctx, servers, opts)
	o.Servers, o.Duration = len(servers), jsondoc.Seconds(time.Since(started))
	saveEras()
	if ctx.Err() != nil {
		o.Outcome, o.code = "interrupted", exitSignals
		return o
	}

	plan, err := preflight.Relock(setup.lock, observations, preflight.RelockOptions{
		AllowEmpty: f.allowEmpty, Fingerprints: f.fingerprints, Prune: len(f.servers) == 0, Keep: setup.skip,
	})
	if err != nil {
		return refuse(err)
	}
	if len(plan.Refused) > 0 {
		o.Refused = plan.Refused
		o.Outcome, o.code = "refused", exitConfig
		return o
	}
	if setup.lockChanged() {
		// Another writer (a second 'mcpwatch lock', a checkout) changed it
		// while the probes ran: writing now would drop that change.
		return refuse(fmt.Errorf("%s changed while the servers were probed; review it and run 'mcpwatch lock' again", setup.lockPath))
	}
	o.Summary = describeLock(plan.Lock)
	// A write killed half-way (kill -9) left a temp file; it goes now
	// even when nothing is written.
	atomicfile.SweepTemps(setup.lockPath)
	data := plan.Lock.Marshal()
	old, readErr := readfile.Read(setup.lockPath, lockstore.MaxFileBytes)
	if readErr == nil && bytes.Equal(old, data) {
		o.Outcome = "unchanged"
		return o
	}
	if err := lockstore.Write(setup.lockPath, plan.Lock); err != nil {
		o.Outcome, o.Error, o.code = "failed", fmt.Sprintf("write %s: %v", setup.lockPath, err), exitFailed
		return o
	}
	o.Outcome = "written"
	for _, ch := range plan.Changes {
		o.Changes = append(o.Changes, lockChange{Change: ch, Note: describeServerChange(setup.lock, plan.Lock, ch.Server)})
	}
	return o
}

// lockFormats are lock's output formats.
var lockFormats = formats[*lockOutcome]{
	preflight.FormatText: func(w io.Writer, o *lockOutcome) error { return o.writeText(w) },
	preflight.FormatJSON: func(w io.Writer, o *lockOutcome) error { return o.writeJSON(w) },
}

func (o *lockOutcome) writeJSON(w io.Writer) error { return jsondoc.Write(w, o) }

func (o *lockOutcome) writeText(w io.Writer) error {
	b := &strings.Builder{}
	summary := func() string {
		return fmt.Sprintf("probed %s in %s; the lock holds %s", countOf(o.Servers, "server", "servers"),
			formatMillis(time.Duration(o.Duration)), o.Summary)
	}
	switch {
	case o.Outcome == "interrupted":
		fmt.Fprintf(b, "interrupted: %s left unchanged\n", o.Lock)
	case o.Outcome == "failed":
		// cmdLock says it on stderr.
	case o.Error != "":
		fmt.Fprintf(b, "refusing to write the lock: %s\n", o.Error)
	case len(o.Refused) > 0:
		fmt.Fprintf(b, "refusing to write the lock: %d of %s cannot be locked now\n",
			len(o.Refused), countOf(o.Servers, "server", "servers"))
		var skip []string
		for _, r := range o.Refused {
			fmt.Fprintf(b, "  - %s: %s\n", sanitize.Text(r.Server), sanitize.Text(r.Message))
			for _, d := range r.Details {
				fmt.Fprintf(b, "      %s\n", sanitize.Text(d))
			}
			skip = append(skip, "--skip "+sanitize.Text(sanitize.ShellQuote(r.Server)))
		}
		fmt.Fprintf(b, "%s left unchanged\n", o.Lock)
		if len(o.Refused) < o.Servers {
			fmt.Fprintf(b, "To lock the others now, leave these out: 'mcpwatch lock %s' (their entries are kept), or list them under ignore: in mcpwatch.yml; 'mcpwatch lock --server NAME' relocks one server alone.\n", strings.Join(skip, " "))
		}
	case o.Outcome == "unchanged":
		fmt.Fprintf(b, "%s: no change (%s)\n", o.Lock, summary())
	default:
		fmt.Fprintf(b, "wrote %s (%s)\n", o.Lock, summary())
		if len(o.Changes) == 0 {
			b.WriteString("  no change in the locked tools\n")
		}
		for _, ch := range o.Changes {
			note := ""
			if ch.Note != "" {
				note = " (" + ch.Note + ")"
			}
			fmt.Fprintf(b, "  %s%s\n", sanitize.Text(ch.Change.String()), note)
		}
	}
	if len(o.Skipped) > 0 && o.Outcome != "failed" {
		fmt.Fprintf(b, "  skipped (not probed, entries kept): %s\n", strings.Join(o.Skipped, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describeServerChange says when a whole server came or went.
func describeServerChange(old, new *lockstore.Lock, server string) string {
	_, before := old.Entry(server)
	_, after := new.Entry(server)
	switch {
	case !before:
		return "new server"
	case !after:
		return "server no longer configured: dropped"
	}
	return ""
}

func describeLock(l *lockstore.Lock) string {
	tools := 0
	for _, s := range l.Servers() {
		e, _ := l.Entry(s)
		tools += len(e.Tools)
	}
	return countOf(tools, "tool", "tools") + " of " + countOf(len(l.Servers()), "server", "servers")
}

func countOf(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

func formatMillis(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}

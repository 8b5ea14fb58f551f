package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/preflight"
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
byte; without, the lock holds exactly the configured servers.

The lock is the seed's format, {"server": ["tool_a", "tool_b"]}, which the
seed's preflight script reads too. --fingerprints also records each tool's
input-schema fingerprint and description hash, so 'mcpwatch check --strict'
catches a changed schema; a server locked with them keeps them.

Configuration as for 'mcpwatch check' (see its --help).

Exit codes: 0 written, or unchanged; 78 refused, or the configuration or
the old lock is unusable; 1 the lock could not be written; 2 usage error;
130 interrupted.

Flags:
%s`

type lockFlags struct {
	configFile   string
	lockFile     string
	timeout      time.Duration
	servers      []string
	allowEmpty   bool
	fingerprints bool
}

func newLockFlagSet(f *lockFlags) *pflag.FlagSet {
	fs := newFlagSet("lock")
	addPreflightFlags(fs, &f.configFile, &f.lockFile, &f.timeout, &f.servers)
	fs.BoolVar(&f.allowEmpty, "allow-empty", false, "lock a server that lists no tools as offering none")
	fs.BoolVar(&f.fingerprints, "fingerprints", false, "also lock each tool's input-schema fingerprint and description hash")
	return fs
}

func cmdLock(ctx context.Context, c *cli, args []string) int {
	var f lockFlags
	fs := newLockFlagSet(&f)
	if code, ok := parseArgs(c, fs, lockHelp, args, func() error { return checkPreflightArgs(fs, f.timeout) }); !ok {
		return code
	}

	setup, err := loadPreflight(c, f.configFile, f.lockFile)
	if err == nil {
		if err = setup.readLock(false); err != nil {
			err = fmt.Errorf("%w\nthe old lock must be readable to relock: fix it, or move it away to start afresh", err)
		}
	}
	if err != nil {
		fmt.Fprintf(c.stdout, "refusing to write the lock: %v\n", err)
		return exitConfig
	}
	if err := setup.selectServers(f.servers, false); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch lock: %v\n", err)
		return exitUsage
	}

	var servers []config.Server
	for _, s := range setup.cfg.Servers {
		if len(f.servers) == 0 || slices.Contains(f.servers, s.Name) {
			servers = append(servers, s)
		}
	}
	started := time.Now()
	observations := preflight.Observe(ctx, servers, setup.options(c, f.timeout))
	took := time.Since(started)
	if ctx.Err() != nil {
		fmt.Fprintf(c.stdout, "interrupted: %s left unchanged\n", setup.lockPath)
		return exitSignals
	}

	plan, err := preflight.Relock(setup.lock, observations, preflight.RelockOptions{
		AllowEmpty: f.allowEmpty, Fingerprints: f.fingerprints, Prune: len(f.servers) == 0,
	})
	if err != nil {
		fmt.Fprintf(c.stdout, "refusing to write the lock: %v\n", err)
		return exitConfig
	}
	if len(plan.Refused) > 0 {
		fmt.Fprintf(c.stdout, "refusing to write the lock: %d of %s cannot be locked now\n",
			len(plan.Refused), countOf(len(servers), "server", "servers"))
		for _, r := range plan.Refused {
			fmt.Fprintf(c.stdout, "  - %s: %s\n", r.Server, r.Message)
			for _, d := range r.Details {
				fmt.Fprintf(c.stdout, "      %s\n", d)
			}
		}
		fmt.Fprintf(c.stdout, "%s left unchanged\n", setup.lockPath)
		return exitConfig
	}

	if setup.lockChanged() {
		// Another writer (a second 'mcpwatch lock', a checkout) changed it
		// while the probes ran: writing now would drop that change.
		fmt.Fprintf(c.stdout, "refusing to write the lock: %s changed while the servers were probed; review it and run 'mcpwatch lock' again\n", setup.lockPath)
		return exitConfig
	}
	data := plan.Lock.Marshal()
	old, readErr := os.ReadFile(setup.lockPath)
	summary := fmt.Sprintf("probed %s in %s; the lock holds %s", countOf(len(servers), "server", "servers"),
		formatMillis(took), describeLock(plan.Lock))
	if readErr == nil && bytes.Equal(old, data) {
		fmt.Fprintf(c.stdout, "%s: no change (%s)\n", setup.lockPath, summary)
		return exitOK
	}
	if err := lockstore.Write(setup.lockPath, plan.Lock); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch lock: write %s: %v\n", setup.lockPath, err)
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "wrote %s (%s)\n", setup.lockPath, summary)
	if len(plan.Changes) == 0 {
		fmt.Fprintln(c.stdout, "  no change in the locked tools")
	}
	for _, ch := range plan.Changes {
		fmt.Fprintf(c.stdout, "  %s%s\n", ch, describeServerChange(setup.lock, plan.Lock, ch.Server))
	}
	return exitOK
}

// describeServerChange says when a whole server came or went.
func describeServerChange(old, new *lockstore.Lock, server string) string {
	_, before := old.Entry(server)
	_, after := new.Entry(server)
	switch {
	case !before:
		return " (new server)"
	case !after:
		return " (server no longer configured: dropped)"
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

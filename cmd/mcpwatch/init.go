package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/starter"
)

const initHelp = `Usage:
  mcpwatch init [flags]

Sets up a credential watch in a folder that has only an MCP client config
(.mcp.json, or any configuration 'mcpwatch check' reads, found the same
way). It probes every server once and:

  - writes the lock (mcp-tools.lock.json), the tools each server offers,
    for 'mcpwatch check' to compare with; a server whose probe failed is
    never locked;
  - writes a starter contracts file per server, mcp-contracts/NAME.tools.json
    beside the lock (or adds to the file mcpwatch.yml names for it), which
    check and serve then read:
      - a server mcpwatch's catalogue of vetted canaries knows (by the
        package and version in its npx, uvx or docker arguments, or its
        URL: GitHub, Notion, Sentry, Slack, Stripe, Brave Search, Context7,
        Linear, PostgreSQL...) gets the entry's canary, enabled: the tool
        that only reads and sees its credential, named with its entry;
      - the tools annotated readOnlyHint: true that need no input are
        canaries at once, with the shape of the answer they gave to one
        call;
      - a read-only tool that needs input gets one generated from its
        schema, which can prove only that the credential is accepted:
        enabled when nothing else watches the server, else disabled;
      - tools not annotated read-only whose names read as a query are
        proposed, "disabled": true, each with every opt-in it would take
        written beside it.
    What it writes passes 'mcpwatch check --strict' as it is. Nothing is
    ever called that is not annotated read-only, unless the catalogue
    vouches for it; the one call init makes of a tool is of a read-only
    tool that needs no input;
  - prints, per server, which canary watches its credential, or "no canary
    can see this server's credential" and why.

Run it again at any time: it only adds. A server already in the lock keeps
its entry ('mcpwatch lock' relocks, after review); a contracts file that is
there keeps every byte, a person's edits included, and gains entries only
for tools it has none for. It says what it kept.

A server whose command installs what it runs (npx -y, uvx, pipx run, bunx,
pnpm dlx, docker run) may be installing on this first start: its probe
gets start_timeout (default 2m), as in 'mcpwatch check'.

Exit codes: 0 every server probed, locked and given its file; 78 a server
could not be probed or locked, a file could not be written, or the
configuration or the lock is unusable; 2 usage error; 130 interrupted.

Flags:
%s
Examples:
  mcpwatch init                      # in the folder with .mcp.json
  git add mcp-tools.lock.json mcp-contracts/ && mcpwatch check
`

type initFlags struct {
	configFile  string
	lockFile    string
	timeout     time.Duration
	noCatalogue bool
	noIssuer    bool
}

func newInitFlagSet(f *initFlags) *pflag.FlagSet {
	fs := newFlagSet("init")
	fs.StringVarP(&f.configFile, "config.file", "c", "", configFileUsage)
	fs.StringVarP(&f.lockFile, "lock.file", "l", "", "lock `file` to add to (default: the configuration's lock, mcp-tools.lock.json)")
	fs.BoolVar(&f.noCatalogue, "no-catalogue", false, "leave mcpwatch's catalogue of vetted canaries out: every server gets what its tools' annotations alone allow")
	fs.DurationVar(&f.timeout, "timeout", 0, "deadline of each probe, replacing every server's own (default: the server's timeout; start_timeout for a command that installs what it runs)")
	addIssuerFlag(fs, &f.noIssuer)
	return fs
}

func cmdInit(ctx context.Context, c *cli, args []string) int {
	var f initFlags
	fs := newInitFlagSet(&f)
	if code, ok := parseArgs(c, fs, initHelp, args, func() error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		if fs.Changed("timeout") && f.timeout <= 0 {
			return usagef("--timeout must be positive, got %s", f.timeout)
		}
		return nil
	}); !ok {
		return code
	}

	setup, err := loadPreflight(c, f.configFile, f.lockFile)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch init: %v\n", err)
		return exitConfig
	}
	dir, _ := os.Getwd()
	r := starter.Run(ctx, setup.cfg, starter.Options{
		Preflight:   setup.options(c, f.timeout, f.noIssuer),
		Dir:         dir,
		Lock:        setup.lockPath,
		NoCatalogue: f.noCatalogue,
	})
	if err := starter.WriteText(c.stdout, r, dir); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch init: write to stdout: %v\n", err)
	}
	switch {
	case ctx.Err() != nil:
		return exitSignals
	case r.Failed():
		return exitConfig
	}
	return exitOK
}

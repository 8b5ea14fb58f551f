// Command mcpwatch watches the tool surface of MCP servers: a daemon that
// probes them on a schedule and exports Prometheus metrics, and a preflight
// for CI that fails when a locked tool is missing.
//
// This is the only package that calls os.Exit.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/mcpwatch/mcpwatch/internal/util/suggest"
)

// Exit codes are part of the interface.
const (
	exitOK      = 0
	exitFailed  = 1  // a probe failed (mcpwatch probe), a file could not be written, HTTP could not be served
	exitUsage   = 2  // bad flags or arguments
	exitConfig  = 78 // EX_CONFIG: a locked tool is missing, a server could not be probed, or the config is unusable
	exitSignals = 130
)

// cli is what a command may touch of the outside world, so tests can run
// commands in-process with an environment of their own.
type cli struct {
	stdout, stderr io.Writer
	// lookupEnv reads a variable of mcpwatch's environment, telling an
	// unset variable from an empty one (which ${VAR} needs).
	lookupEnv func(string) (string, bool)
}

// getenv reads a variable where unset and empty mean the same: the Python
// preflight's MCP_CONFIG, MCP_TOOL_LOCK, $GITHUB_STEP_SUMMARY.
func (c *cli) getenv(name string) string {
	v, _ := c.lookupEnv(name)
	return v
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, c *cli, args []string) int
}

func commands() []command {
	return []command{
		{"init", "set up a folder's servers: the lock, starter canary contracts, which canary watches each credential", cmdInit},
		{"check", "probe servers once and compare with the lock (CI preflight)", cmdCheck},
		{"lock", "probe servers and write the lock", cmdLock},
		{"probe", "probe one MCP server now and print what it offers", cmdProbe},
		{"login", "sign in once in a browser for a server that wants a person's OAuth consent", cmdLogin},
		{"config", "validate a configuration and print its servers, secrets redacted", cmdConfig},
		{"doctor", "prove the repository's CI gate runs check as it should (strict, receipt, secrets, schedule)", cmdDoctor},
		{"discover", "list the MCP servers the host's agents and editors are configured with", cmdDiscover},
		{"serve", "run the daemon: probe on schedule, export metrics, serve the status page", cmdServe},
		{"version", "print the version", cmdVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &cli{stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		usage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help":
		if len(args) > 1 {
			// mcpwatch help check: check's own help, as git help and go help
			// answer; the words after it name a subcommand (help config check).
			return run(ctx, c, append(slices.Clone(args[1:]), "--help"))
		}
		usage(c.stdout)
		return exitOK
	case "-h", "--help":
		usage(c.stdout)
		return exitOK
	case "-v", "--version":
		return cmdVersion(ctx, c, nil)
	}
	var names []string
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return cmd.run(ctx, c, args[1:])
		}
		names = append(names, cmd.name)
	}
	if strings.HasPrefix(args[0], "-") {
		names = []string{"--help", "--version"}
	}
	fmt.Fprintf(c.stderr, "mcpwatch: unknown command %q%s; run 'mcpwatch --help' for the list\n", args[0], didYouMean(args[0], names))
	return exitUsage
}

// didYouMean is ", did you mean NAME?" for the one of names that typed was
// most likely meant to be, or "" when none is near.
func didYouMean(typed string, names []string) string {
	if near := suggest.Closest(typed, names); near != "" {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `mcpwatch watches the tool surface of MCP servers.

Usage: mcpwatch COMMAND [flags]
       mcpwatch -v, --version

Commands:`)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintln(w, `
Run 'mcpwatch COMMAND --help' (or 'mcpwatch help COMMAND') for a command's flags.

Exit codes: 0 ok; 1 a probe failed (probe), a file could not be written
(check, lock) or HTTP could not be served (serve); 2 usage error; 78 a
locked tool is missing, a server could not be probed, or the configuration
is unusable; 130 interrupted. Each command's --help has its own list.`)
}

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// newFlagSet returns the flag set of a command, named as the command line
// names it ("check", "config check"). It prints nothing itself: parseArgs
// prints the help or the one error.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parseArgs parses a command's arguments, then runs check (nil for none)
// on what they gave. On --help it prints help (a format whose one %s takes
// the flag list) and returns exitOK; on a usage error it prints the error
// and where to read the help, and returns exitUsage. ok is true when the
// command should go on.
func parseArgs(c *cli, fs *pflag.FlagSet, help string, args []string, check func() error) (code int, ok bool) {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(c.stdout, help, fs.FlagUsages())
		return exitOK, false
	}
	if err == nil && check != nil {
		err = check()
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch %s: %v\nRun 'mcpwatch %s --help' for usage.\n", fs.Name(), err, fs.Name())
		return exitUsage, false
	}
	return exitOK, true
}

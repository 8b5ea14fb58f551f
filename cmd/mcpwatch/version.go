package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/prometheus/common/version"
	"github.com/spf13/pflag"
)

const versionHelp = `Usage:
  mcpwatch version

Prints the version, the revision and branch it was built from, the Go
version and the build date. A binary built with 'go install' carries the
module version; 'make build' stamps the git description.

%s`

func newVersionFlagSet() *pflag.FlagSet {
	return newFlagSet("version")
}

func cmdVersion(_ context.Context, c *cli, args []string) int {
	fs := newVersionFlagSet()
	if code, ok := parseArgs(c, fs, versionHelp, args, func() error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		return nil
	}); !ok {
		return code
	}
	fmt.Fprintln(c.stdout, version.Print("mcpwatch"))
	return exitOK
}

// init names the version of a binary that 'make build' did not stamp: the
// module version 'go install ...@v1.2.3' records, else "dev".
func init() {
	version.Version = moduleVersion(version.Version)
}

func moduleVersion(stamped string) string {
	if stamped != "" {
		return stamped
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

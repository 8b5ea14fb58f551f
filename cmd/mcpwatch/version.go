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
version and the build date. 'make build' and the releases stamp the git
description and revision; a binary built by a plain 'go build' or 'go
install' in a git clone names the module version Go derived from git, and
the commit and its date that Go recorded (vcs.revision, vcs.time). A build
with -buildvcs=false (GOFLAGS) or outside a clone records none, and says so.

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
	if !buildStamped {
		fmt.Fprintln(c.stdout, "  (no revision recorded: built with -buildvcs=false, as GOFLAGS may set, or outside a git clone; 'make build', or 'go build -buildvcs=true' in the clone, records it)")
	}
	return exitOK
}

// buildStamped is whether the binary knows the revision it was built from,
// stamped by 'make build' or recorded by Go.
var buildStamped bool

// init names the version, revision and date of a binary that 'make build'
// did not stamp, from what Go recorded in it: the module version ('go
// install ...@v1.2.3', or the one Go derives from git for a build in a
// clone), and the commit and its time.
func init() {
	bi, _ := debug.ReadBuildInfo()
	version.Version = moduleVersion(version.Version)
	rev, date := vcsStamp(bi)
	if version.Revision == "" {
		version.Revision = rev
	}
	if version.BuildDate == "" {
		version.BuildDate = date
	}
	buildStamped = version.Revision != ""
}

// vcsStamp returns the revision ("-modified" when the tree had uncommitted
// changes, as prometheus/common writes it) and the commit's time that Go
// recorded in a build made in a git clone; "" for each it did not.
func vcsStamp(bi *debug.BuildInfo) (revision, date string) {
	if bi == nil {
		return "", ""
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			date = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision != "" && modified {
		revision += "-modified"
	}
	return revision, date
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

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/doctor"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
)

const doctorHelp = `Usage:
  mcpwatch doctor [flags]

Proves that the repository's CI gate enforces what the team trusts. Run it
in the repository (anywhere in its git work tree). It reads the GitHub
Actions workflows (.github/workflows/*.yml, *.yaml) and .gitlab-ci.yml, and
passes when at least one CI step

  - runs mcpwatch check on the intended configuration (--config.file here,
    else the one mcpwatch check finds at the repository's top), with on
    that same command --strict (or --fail-on-warn), CI output (GitHub:
    --format github; GitLab: --format junit --output FILE, kept as the
    job's artifacts: reports: junit:) and --receipt FILE, and nothing that
    hides its exit status;
  - is followed in its job by an upload of that receipt, also when the check
    fails (actions/upload-artifact with if: always(); GitLab: artifacts:
    paths: with when: always);
  - runs on pull requests and on a schedule, or its workflow says why not
    in a comment on its on: key:  # mcpwatch-doctor: no-schedule because ...
  - is given every variable the checked servers' ${VAR} references need,
    in its env: (or its job's, or the workflow's), from a secret or a
    variable;
  - gives every server that installs what it runs (npx, uvx, docker run,
    ...) a start-up allowance of at least a minute (start_timeout, default
    2m), and has a job timeout that leaves room for it and the check;

and when the lock exists, is tracked by git and covers every server, the
contracts files are tracked and expected tools are locked and contracted,
and each server given a credential has a canary (a contract that is called)
that sees it. Doctor starts no server: it reads the tools the lock holds.

Each finding names the file, the line and the fix. With several steps that
run mcpwatch check, the one closest to a gate is judged; flags spread over
several steps do not count.

Exit codes: 0 the gate holds; 78 it does not (every finding is printed); 1
the report could not be written; 2 usage error.

Flags:
%s
Examples:
  mcpwatch doctor
  mcpwatch doctor --config.file agents/.mcp.json --format json
`

type doctorFlags struct {
	configFile string
	out        outputFlags
}

func newDoctorFlagSet(f *doctorFlags) *pflag.FlagSet {
	fs := newFlagSet("doctor")
	fs.StringVarP(&f.configFile, "config.file", "c", "", "the configuration the gate must check (default: the one mcpwatch check finds at the repository's top)")
	addOutputFlags(fs, &f.out, "write the report to this `file` instead of stdout", formatNames(doctorFormats))
	return fs
}

// doctorFormats are doctor's output formats.
var doctorFormats = formats[*doctor.Report]{
	preflight.FormatText: doctor.WriteText,
	preflight.FormatJSON: doctor.WriteJSON,
}

func cmdDoctor(_ context.Context, c *cli, args []string) int {
	var f doctorFlags
	fs := newDoctorFlagSet(&f)
	if code, ok := parseArgs(c, fs, doctorHelp, args, func() error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		return f.out.check()
	}); !ok {
		return code
	}
	dir, err := repositoryTop()
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch doctor: %v\n", err)
		return exitConfig
	}
	configFile := f.configFile
	if configFile != "" && !filepath.IsAbs(configFile) {
		if configFile, err = filepath.Abs(configFile); err != nil {
			fmt.Fprintf(c.stderr, "mcpwatch doctor: %v\n", err)
			return exitConfig
		}
	}
	report := doctor.Examine(doctor.Options{Dir: dir, Config: configFile, Getenv: c.getenv, ParseCheck: parseCheckArgs})
	if err := writeOutput(c, &f.out, doctorFormats, report); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch doctor: write the report: %v\n", err)
		return exitFailed
	}
	if !report.OK {
		return exitConfig
	}
	return exitOK
}

// repositoryTop is the top of the git work tree doctor runs in; outside
// one, the working directory (doctor then says it cannot tell what git
// tracks).
func repositoryTop() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	out, gitErr := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if gitErr != nil {
		return wd, nil //nolint:nilerr // outside a work tree doctor still runs, and says it cannot tell what git tracks
	}
	return strings.TrimSpace(string(out)), nil
}

// parseCheckArgs reads an mcpwatch check command line (after "check") as
// check does: with its own flag set and checks.
func parseCheckArgs(args []string) (doctor.CheckFlags, error) {
	var f checkFlags
	fs := newCheckFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		return doctor.CheckFlags{}, err
	}
	if err := f.preflightFlags.check(fs); err != nil {
		return doctor.CheckFlags{}, err
	}
	return doctor.CheckFlags{
		ConfigFile: f.configFile, LockFile: f.lockFile, Strict: f.strict,
		Format: f.out.format, Output: f.out.output, Receipt: f.receipt,
		Timeout: f.timeout, Servers: f.servers, Skip: f.skip,
	}, nil
}

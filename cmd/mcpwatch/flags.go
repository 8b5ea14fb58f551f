package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Every subcommand defines its flags in one place, its newXFlagSet; the
// flags several share are added by the helpers below, so a flag means the
// same thing wherever it appears:
//
//	--format NAME      the output format (text, json, ...)
//	--output, -o FILE  the file the output goes to instead of stdout
//	--config.file, -c  the configuration (default ./mcpwatch.yml, else ./.mcp.json)

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
		fmt.Fprintf(c.stderr, "mcpwatch %s: %v%s\nRun 'mcpwatch %s --help' for usage.\n", fs.Name(), err, flagSuggestion(fs, err), fs.Name())
		return exitUsage, false
	}
	return exitOK, true
}

// flagSuggestion is " (did you mean --NAME?)" when err is an unknown long
// flag near one of fs's (--stirct for --strict), else "".
func flagSuggestion(fs *pflag.FlagSet, err error) string {
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) || unknown.GetSpecifiedName() == "" {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	return didYouMean("--"+unknown.GetSpecifiedName(), names)
}

// configFileUsage is --config.file's help in every command that reads a
// configuration.
const configFileUsage = "configuration `file`: an mcpwatch.yml or a client config such as .mcp.json (default ./mcpwatch.yml, else ./.mcp.json)"

// outputFlags are --format and --output.
type outputFlags struct {
	format  string
	output  string
	formats []string // the names of the command's formats (formatNames); text, the default, first
}

// addOutputFlags adds --format (one of formats, the first the default) and
// --output to fs. fileUsage says what goes to the file.
func addOutputFlags(fs *pflag.FlagSet, o *outputFlags, fileUsage string, formats []string) {
	o.formats = formats
	fs.StringVar(&o.format, "format", formats[0], "output `format`: "+orList(formats))
	fs.StringVarP(&o.output, "output", "o", "", fileUsage)
}

// allFormats are the format names of every command (check's are the
// others' and more): an --output that is one of them is the old spelling
// of --format (probe and config check took -o as the format).
var allFormats = formatNames(checkFormats)

// check validates --format, and refuses an --output that names a format.
func (o *outputFlags) check() error {
	if slices.Contains(allFormats, o.output) {
		return usagef("--output %q: --output names the file to write; for the output format write --format %s (and ./%s for a file of that name)", o.output, o.output, o.output)
	}
	return oneOf("format", o.format, o.formats...)
}

func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// preflightFlags are the flags check and lock share. addPreflightFlags adds
// the first five; each command adds out (its own formats) and eras itself,
// and check validates them all.
type preflightFlags struct {
	configFile string
	lockFile   string
	timeout    time.Duration
	servers    []string
	skip       []string
	noIssuer   bool
	out        outputFlags
	eras       eraFlags
}

func addPreflightFlags(fs *pflag.FlagSet, f *preflightFlags) {
	fs.StringVarP(&f.configFile, "config.file", "c", "", configFileUsage)
	fs.StringVarP(&f.lockFile, "lock.file", "l", "", "lock `file` (default: the configuration's lock, mcp-tools.lock.json)")
	fs.DurationVar(&f.timeout, "timeout", 0, "deadline of each probe, replacing every server's own (default: the server's timeout, 10s); a command that installs before it runs (npx, uvx, docker run) gets at least its start_timeout, 2m")
	fs.StringArrayVar(&f.servers, "server", nil, "only the server `NAME` (repeatable; default every server but the ignored ones)")
	fs.StringArrayVar(&f.skip, "skip", nil, "leave the server `NAME` out: not probed, its lock entry kept (repeatable; as ignore: in mcpwatch.yml)")
	addIssuerFlag(fs, &f.noIssuer)
}

// addIssuerFlag adds --no-issuer-check.
func addIssuerFlag(fs *pflag.FlagSet, off *bool) {
	fs.BoolVar(off, "no-issuer-check", false, "do not ask the services that issued the servers' credentials (GitHub, GitLab, Slack, ...) whether they take them; as issuer_check: false in mcpwatch.yml (docs/credentials.md)")
}

func (f *preflightFlags) check(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("timeout") && f.timeout <= 0 {
		return usagef("--timeout must be positive, got %s", f.timeout)
	}
	for _, name := range f.skip {
		if slices.Contains(f.servers, name) {
			return usagef("--server %s and --skip %s contradict each other; keep one", name, name)
		}
	}
	if err := f.eras.check(fs); err != nil {
		return err
	}
	return f.out.check()
}

// remoteTransport reads --transport as every source of a server reads a
// transport (probe.ParseTransport: streamable-http is http), for a --url.
func remoteTransport(value string) (probe.Transport, error) {
	if t, ok := probe.ParseTransport(value); ok && t.Remote() {
		return t, nil
	}
	return "", usagef("--transport %q: want one of auto, http, sse", value)
}

// headerMap reads --header 'Name: value' flags (checked by the command's
// check) as a server's headers: nil for none.
func headerMap(headers []string) map[string]string {
	var m map[string]string
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		if m == nil {
			m = map[string]string{}
		}
		m[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return m
}

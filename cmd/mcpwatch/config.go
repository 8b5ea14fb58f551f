package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

const configHelp = `Usage:
  mcpwatch config check [flags]

Validates a configuration and prints its servers, with every secret
redacted: env and header values show as <redacted> unless they are
references such as ${TOKEN} or ${file:/run/secrets/token}, which are shown
as written. Then it tries every reference now, as a probe would, and lists
each unset variable, unreadable secret file, command not found, missing cwd
or CA file, naming the server and the key.

With no --config.file it reads ./mcpwatch.yml if there is one, else
./.mcp.json (or $MCP_CONFIG) with the lock mcp-tools.lock.json (or
$MCP_TOOL_LOCK), as 'mcpwatch check' does.

Exit codes: 0 the configuration is usable; 2 usage error; 78 it is not, or
a reference cannot be read now.

Flags:
%s`

type configFlags struct {
	configFile string
	out        outputFlags
}

func newConfigFlagSet(f *configFlags) *pflag.FlagSet {
	fs := newFlagSet("config check")
	fs.StringVarP(&f.configFile, "config.file", "c", "", configFileUsage)
	addOutputFlags(fs, &f.out, "write the result to this `file` instead of stdout", formatNames(configFormats))
	return fs
}

func cmdConfig(_ context.Context, c *cli, args []string) int {
	var f configFlags
	fs := newConfigFlagSet(&f)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w, code := c.stdout, exitOK
		if len(args) == 0 {
			w, code = c.stderr, exitUsage
		}
		fmt.Fprintf(w, configHelp, fs.FlagUsages())
		return code
	}
	if args[0] != "check" {
		fmt.Fprintf(c.stderr, "mcpwatch config: unknown subcommand %q; the one there is: check\n", args[0])
		return exitUsage
	}
	if code, ok := parseArgs(c, fs, configHelp, args[1:], func() error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		return f.out.check()
	}); !ok {
		return code
	}

	cfg, source, err := loadConfig(f.configFile, c.getenv)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch config check: %s is unusable:\n", source)
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(c.stderr, "  - %s\n", sanitize.Text(line))
		}
		return exitConfig
	}
	problems := launch.Check(cfg, c.lookupEnv)
	warnings := cfg.Warnings()
	issuers := issuerChecks(cfg, c.lookupEnv)

	checked := &configChecked{cfg: cfg, source: source, problems: problems, warnings: warnings, issuers: issuers}
	if err := writeOutput(c, &f.out, configFormats, checked); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch config check: write the result: %v\n", err)
		return exitFailed
	}
	if len(problems) > 0 {
		return exitConfig
	}
	return exitOK
}

func verdict(problems []error) string {
	if len(problems) > 0 {
		return "FAILED"
	}
	return "OK"
}

// loadConfig reads the configuration every command reads, as
// config.Discover chooses it (file is --config.file, "" for none). source
// names what was read, or tried, for messages.
func loadConfig(file string, getenv func(string) string) (cfg *config.Config, source string, err error) {
	src, err := config.Discover(file, ".", getenv)
	if err == nil {
		cfg, err = imports.LoadSource(src, getenv)
	}
	return cfg, src.Name, err
}

// issuerChecks says, by server, which of its credentials a probe would
// check at the service that issued it, and where (or why not): its
// target built now, as a probe would build it.
func issuerChecks(cfg *config.Config, lookup func(string) (string, bool)) map[string][]string {
	out := map[string][]string{}
	for _, s := range cfg.Servers {
		if s.NoIssuerCheck {
			continue
		}
		t, _, err := launch.Resolve(s, lookup)
		if err != nil {
			continue // a problem config check reports
		}
		for _, tie := range issuer.Match(runner.IssuerServer(t)) {
			out[s.Name] = append(out[s.Name], tie.Describe())
		}
	}
	return out
}

// configChecked is what config check found of a configuration.
type configChecked struct {
	cfg      *config.Config
	source   string
	problems []error
	warnings []string
	issuers  map[string][]string
}

// configFormats are config check's output formats.
var configFormats = formats[*configChecked]{
	preflight.FormatText: func(w io.Writer, r *configChecked) error {
		writeConfigText(w, r.cfg, r.source, r.issuers)
		if len(r.warnings) > 0 {
			fmt.Fprintf(w, "\n%d warning(s):\n", len(r.warnings))
			for _, m := range r.warnings {
				fmt.Fprintf(w, "  - %s\n", sanitize.Text(m))
			}
		}
		if len(r.problems) > 0 {
			fmt.Fprintf(w, "\n%d problem(s) a probe would meet now:\n", len(r.problems))
			for _, p := range r.problems {
				fmt.Fprintf(w, "  - %s\n", sanitize.Text(fmt.Sprint(p)))
			}
		}
		_, err := fmt.Fprintf(w, "\n%s: %d server(s), %d problem(s)\n", verdict(r.problems), len(r.cfg.Servers), len(r.problems))
		return err
	},
	preflight.FormatJSON: func(w io.Writer, r *configChecked) error {
		return writeConfigJSON(w, r.cfg, r.source, r.problems, r.warnings, r.issuers)
	},
}

func writeConfigText(w io.Writer, cfg *config.Config, source string, issuers map[string][]string) {
	if cfg.Path != "" {
		source = cfg.Path
	}
	d := cfg.Defaults
	fmt.Fprintf(w, "configuration: %s\n", source)
	fmt.Fprintf(w, "lock:          %s\n", cfg.Lock)
	fmt.Fprintf(w, "defaults:      timeout %s, schedule %q, era %s, concurrency %d (stdio %d), max message %d bytes\n",
		d.Timeout, d.Schedule, d.Era, d.Concurrency, d.StdioConcurrency, d.MaxMessageBytes)
	if len(cfg.Ignore) > 0 {
		fmt.Fprintf(w, "ignored:       %s (not probed)\n", strings.Join(cfg.Ignore, ", "))
	}
	for _, s := range cfg.Servers {
		r := s.Redacted()
		fmt.Fprintf(w, "\n%s  (%s, from %s)\n", sanitize.Text(r.Name), r.Transport, sanitize.Text(r.Source))
		writeServerFields(w, r)
		name := "issuer"
		for _, d := range issuers[s.Name] {
			serverField(w, name, d)
			name = ""
		}
		if s.NoIssuerCheck {
			serverField(w, name, "not asked (issuer_check: false)")
		}
	}
}

// serverField prints one field of a server: its name on the first line of
// a value, aligned, sanitized.
func serverField(w io.Writer, name, value string) {
	if name != "" {
		name += ":"
	}
	fmt.Fprintf(w, "  %-9s %s\n", name, sanitize.Text(value))
}

// writeServerFields prints what a server runs or reaches and how it is
// probed, secrets redacted: config check and discover show servers alike.
func writeServerFields(w io.Writer, r config.RedactedServer) {
	field := func(name, value string) { serverField(w, name, value) }
	// fields lists a map one pair a line, named on the first.
	fields := func(name string, m map[string]string, sep string) {
		for _, k := range sortedKeys(m) {
			field(name, k+sep+m[k])
			name = ""
		}
	}
	if r.Command != "" {
		field("command", shellJoin(append([]string{r.Command}, r.Args...)))
		if r.Dir != "" {
			field("cwd", r.Dir)
		}
		if r.EnvFile != "" {
			field("env file", r.EnvFile)
		}
		fields("env", r.Env, "=")
		if r.InheritEnv {
			field("inherit", "mcpwatch's whole environment")
		}
	}
	if r.URL != "" {
		field("url", r.URL)
		fields("headers", r.Headers, ": ")
		if r.CAFile != "" {
			field("ca file", r.CAFile)
		}
		if r.Insecure {
			field("tls", "certificate NOT verified (insecure_skip_verify)")
		}
		if a := r.Auth; a != nil {
			field("auth", describeAuth(a))
		}
	}
	field("probe", fmt.Sprintf("timeout %s, schedule %q, era %s", r.Timeout, r.Schedule, r.Era))
	if len(r.Calls) > 0 {
		field("calls", fmt.Sprintf("%s, call_schedule %q, call_timeout %s", strings.Join(r.Calls, ", "), r.CallSchedule, r.CallTimeout))
	}
	// Each contract that is not called on call_schedule, and why: paced
	// (a metered tool, a generated input), its own schedule, or held.
	total, name := 0, "paced"
	for _, p := range r.CallPlans {
		total += p.CallsAMonth
		switch {
		case p.Schedule == "":
			field("held", fmt.Sprintf("%s: not called: %s", p.Tool, p.Why))
		case p.Why != "":
			field(name, fmt.Sprintf("%s: %q, %d calls a month: %s", p.Tool, p.Schedule, p.CallsAMonth, p.Why))
			name = ""
		}
	}
	if len(r.CallPlans) > 0 {
		field("calls/mo", fmt.Sprintf("%d canary calls in 30 days at these schedules", total))
	}
	if len(r.Forbid) > 0 {
		field("forbid", strings.Join(r.Forbid, ", "))
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shellJoin prints a command line that can be pasted back into a shell.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == config.Redacted {
			out[i] = a // a placeholder, not a word to paste
		} else {
			out[i] = sanitize.ShellQuote(a)
		}
	}
	return strings.Join(out, " ")
}

// configReport is the JSON form of config check.
type configReport struct {
	Config   string                  `json:"config"`
	Lock     string                  `json:"lock"`
	Defaults configReportDefaults    `json:"defaults"`
	Servers  []config.RedactedServer `json:"servers"`
	Ignored  []string                `json:"ignored,omitempty"`
	Problems []string                `json:"problems"`
	Warnings []string                `json:"warnings,omitempty"`
	// IssuerChecks are, by server, its credentials checked at their
	// issuers and where (docs/credentials.md).
	IssuerChecks map[string][]string `json:"issuer_checks,omitempty"`
	OK           bool                `json:"ok"`
}

type configReportDefaults struct {
	Timeout          string `json:"timeout"`
	Schedule         string `json:"schedule"`
	Concurrency      int    `json:"concurrency"`
	StdioConcurrency int    `json:"stdio_concurrency"`
	Era              string `json:"era"`
	MaxMessageBytes  int64  `json:"max_message_bytes"`
}

func writeConfigJSON(w io.Writer, cfg *config.Config, source string, problems []error, warnings []string, issuers map[string][]string) error {
	if cfg.Path != "" {
		source = cfg.Path
	}
	d := cfg.Defaults
	rep := configReport{
		Config: source, Lock: cfg.Lock,
		Defaults: configReportDefaults{Timeout: d.Timeout.String(), Schedule: d.Schedule, Concurrency: d.Concurrency,
			StdioConcurrency: d.StdioConcurrency, Era: string(d.Era), MaxMessageBytes: d.MaxMessageBytes},
		Servers:      make([]config.RedactedServer, 0, len(cfg.Servers)),
		Ignored:      cfg.Ignore,
		Problems:     make([]string, 0, len(problems)),
		Warnings:     warnings,
		IssuerChecks: issuers,
		OK:           len(problems) == 0,
	}
	for _, s := range cfg.Servers {
		rep.Servers = append(rep.Servers, s.Redacted())
	}
	for _, p := range problems {
		rep.Problems = append(rep.Problems, p.Error())
	}
	return jsondoc.Write(w, rep)
}

// describeAuth prints an auth: block on one line, its secrets redacted.
func describeAuth(a *config.RedactedAuth) string {
	parts := []string{a.Type, "grant " + a.Grant, "client_id " + a.ClientID}
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	add("client_secret", a.ClientSecret)
	add("private_key_file", a.PrivateKeyFile)
	add("key_id", a.KeyID)
	add("auth_method", a.AuthMethod)
	add("refresh_token", a.RefreshToken)
	add("scopes", strings.Join(a.Scopes, " "))
	add("token_url", a.TokenURL)
	return strings.Join(parts, ", ")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/version"
	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

const probeHelp = `Usage:
  mcpwatch probe [flags] [--] COMMAND [ARGS...]    probe a stdio server it spawns
  mcpwatch probe [flags] --url URL                 probe a remote server

Probes one MCP server now, within one deadline, and prints which tools it
offers, or why that could not be told. Exit 0 when the probe succeeded (even
with zero tools: judging the surface is the lock's job), 1 when it failed,
2 on a usage error.

--call TOOL then calls one tool in the same session, with --input as its
arguments, and prints what it answered (text, and the whole result with
--format json): the way to try a canary before writing its contract. As on a
schedule, only a tool annotated readOnlyHint: true is called; any other
needs --allow-side-effects, and one that may be destructive (no
destructiveHint: false) --allow-destructive too. With --call, exit 0 only
when the call was made and answered without isError.

Values of --env, --header, --url and the command and its arguments expand
${VAR} anywhere in the string, ${VAR:-default} (when VAR is unset or empty)
and ${file:PATH} (the file's contents, one trailing newline trimmed). An
unset variable fails the probe with reason "config"; a credential (an --env or
--header whose name says credential, such as API_KEY or Authorization) with no
value, unset or empty, fails it with reason "credential_missing", and the
server is not started, as check and serve do. Quote them with single quotes so
the shell leaves them alone. A stdio server gets a minimal environment (PATH,
HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_*, TMPDIR) plus --env.

Flags:
%s
Examples:
  # A stdio server, its credential passed from mcpwatch's environment:
  mcpwatch probe --env 'REPORT_API_TOKEN=${REPORT_API_TOKEN}' -- ./reportserver

  # An npm server, as JSON, with a short deadline:
  mcpwatch probe --timeout 5s --format json -- npx -y @modelcontextprotocol/server-everything

  # A remote server with a bearer token read from a file:
  mcpwatch probe --url https://mcp.example.com/mcp \
      --header 'Authorization: Bearer ${file:/run/secrets/mcp-token}'

  # A remote server behind OAuth, as a machine client (client credentials):
  mcpwatch probe --url https://mcp.example.com/mcp --oauth-client-id mcpwatch \
      --oauth-client-secret '${file:/run/secrets/mcp-client-secret}'

  # ... or with the refresh token 'mcpwatch login' stored after signing in:
  mcpwatch probe --url https://mcp.example.com/mcp --oauth-client-id my-client \
      --oauth-refresh-token '${file:/var/lib/mcpwatch/mcp.refresh}'

  # Try a canary call by hand before writing its contract:
  mcpwatch probe --call echo --input '{"message": "hi"}' -- npx -y @modelcontextprotocol/server-everything

  # A legacy HTTP+SSE server behind a private CA:
  mcpwatch probe --url https://10.0.0.5:8443/sse --transport sse --ca-file ca.pem
`

// probeFlags are the parsed flags of mcpwatch probe, before expansion.
type probeFlags struct {
	timeout    time.Duration
	era        string
	out        outputFlags
	env        []string
	cwd        string
	inheritEnv bool
	url        string
	transport  string
	headers    []string
	caFile     string
	insecure   bool
	maxMessage string
	transcript bool
	command    []string
	oauth      oauthFlags
	oauthOn    bool
	call       callFlags
}

func newProbeFlagSet(f *probeFlags) *pflag.FlagSet {
	fs := newFlagSet("probe")
	fs.SetInterspersed(false)
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "deadline of the whole probe: spawn or connect, handshake, every page; a command that installs before it runs (npx, uvx, docker run) gets at least 2m")
	fs.StringVar(&f.era, "era", "auto", "protocol era: auto (detect with server/discover), modern (2026-07-28) or legacy (initialize)")
	addOutputFlags(fs, &f.out, "write the result to this `file` instead of stdout", formatNames(probeFormats))
	fs.StringArrayVar(&f.env, "env", nil, "`NAME=VALUE` added to a stdio server's environment (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working `directory` of a stdio server")
	fs.BoolVar(&f.inheritEnv, "inherit-env", false, "pass mcpwatch's whole environment to a stdio server")
	fs.StringVar(&f.url, "url", "", "`URL` of a remote server (instead of a command)")
	fs.StringVar(&f.transport, "transport", "auto", "remote transport: auto (streamable HTTP, then legacy SSE), http or sse")
	fs.StringArrayVar(&f.headers, "header", nil, "`'Name: value'` sent with every HTTP request (repeatable)")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM `file` of the CA that signs the server's certificate")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (test servers only)")
	fs.StringVar(&f.maxMessage, "max-message-bytes", "4MiB", "largest JSON-RPC message or HTTP body accepted (`size`: 1048576, 512KiB, 4MiB, 4M; KB, MB and GB are powers of 1000)")
	fs.BoolVar(&f.transcript, "transcript", false, "record every message sent and received (debugging; header values are never recorded)")
	f.oauth.register(fs)
	f.call.register(fs)
	return fs
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func cmdProbe(ctx context.Context, c *cli, args []string) int {
	var f probeFlags
	var opts probe.Options
	fs := newProbeFlagSet(&f)
	if code, ok := parseArgs(c, fs, probeHelp, args, func() (err error) {
		f.command = fs.Args()
		if err = f.check(fs); err == nil {
			opts, err = f.options()
		}
		return err
	}); !ok {
		return code
	}

	// The flags are a server like any configured one: Build expands it,
	// reads its files, finds a credential given without a value (not
	// probed: credential_missing) and makes its OAuth client.
	b, err := launch.Build(f.server(), c.lookupEnv, launch.BuildOptions{})
	var called *callOutcome
	if f.call.tool != "" {
		called = &callOutcome{}
		opts.AfterList = f.call.hook(called)
	}
	var res *probe.Result
	if err != nil || len(b.Missing) > 0 {
		res = runner.Unbuilt(b, flagError(err), time.Now())
	} else {
		// A command that installs what it runs (npx -y) gets its start
		// time, as check gives it (b.Timeout).
		pctx, cancel := context.WithTimeout(ctx, b.Timeout)
		// The server may echo its credential (on stderr, in an error): what
		// is printed is scrubbed of the values this probe sent it, the
		// OAuth tokens included.
		res = probe.Run(pctx, b.Target, opts)
		cancel()
		if b.Client != nil {
			res.Credentials = b.Client.Status()
		}
		scrub := runner.ScrubberOf(b, b.Target)
		res = runner.Installing(scrub.Result(res), b.Install)
		if called != nil && called.result != nil {
			called.result = scrub.Call(called.result)
		}
	}

	if err := writeOutput(c, &f.out, probeFormats, &probed{res: res, target: describeTarget(&f), called: called}); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch probe: write the result: %v\n", err)
		return exitFailed
	}
	if !res.OK || (called != nil && !called.ok()) {
		return exitFailed
	}
	return exitOK
}

// server is what the flags describe, as the configuration would hold it:
// --timeout, and the default start_timeout when the command installs what
// it runs. It has no name: its errors name the flags (flagError).
func (f *probeFlags) server() config.Server {
	s := config.Server{Timeout: f.timeout, Era: probe.Era(f.era)}
	if f.url == "" {
		s.Command, s.Args, s.Dir, s.InheritEnv = f.command[0], f.command[1:], f.cwd, f.inheritEnv
		for _, kv := range f.env {
			name, value, _ := strings.Cut(kv, "=")
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[name] = value
		}
		return s.Normalized(config.Defaults{})
	}
	s.URL, s.CAFile, s.Insecure, s.Headers = f.url, f.caFile, f.insecure, headerMap(f.headers)
	s.Transport, _ = remoteTransport(f.transport) // checked by check
	if f.oauthOn {
		s.Auth = f.oauth.auth()
	}
	return s.Normalized(config.Defaults{})
}

// flagError names the flag a key of server's error stands for: "--env
// TOKEN" for env.TOKEN.
func flagError(err error) error {
	var ee *expand.Error
	if !errors.As(err, &ee) {
		return err
	}
	kind, name, _ := strings.Cut(ee.Key, ".")
	name = strings.Trim(name, `"`)
	switch kind {
	case "env", "headers":
		ee.Key = "--" + strings.TrimSuffix(kind, "s") + " " + name
	case "auth":
		ee.Key = "--oauth-" + strings.ReplaceAll(name, "_", "-")
	case "tls":
		ee.Key = "--ca-file"
	case "url", "cwd":
		ee.Key = "--" + kind
	default: // command, args[N]
		if i, ok := strings.CutPrefix(strings.TrimSuffix(kind, "]"), "args["); ok {
			n, _ := strconv.Atoi(i)
			ee.Key = fmt.Sprintf("argument %d", n+1)
		}
	}
	return ee
}

// check rejects contradictory or malformed flags.
func (f *probeFlags) check(fs *pflag.FlagSet) error {
	stdioOnly := []string{"env", "cwd", "inherit-env"}
	remoteOnly := append([]string{"transport", "header", "ca-file", "insecure"}, oauthFlagNames...)
	switch {
	case f.url != "" && len(f.command) > 0:
		return usagef("give either --url or a command, not both")
	case f.url == "" && len(f.command) == 0:
		return usagef("give a command to spawn (after --) or --url")
	case f.timeout <= 0:
		return usagef("--timeout must be positive, got %s", f.timeout)
	}
	misplaced, where := remoteOnly, "a command"
	if f.url != "" {
		misplaced, where = stdioOnly, "--url"
	}
	for _, name := range misplaced {
		if fs.Changed(name) {
			return usagef("--%s does not apply to %s", name, where)
		}
	}
	if err := checkEra(f.era); err != nil {
		return err
	}
	if err := f.call.check(fs); err != nil {
		return err
	}
	if err := f.out.check(); err != nil {
		return err
	}
	if _, err := remoteTransport(f.transport); err != nil {
		return err
	}
	for _, kv := range f.env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return usagef("--env %q: want NAME=VALUE", truncateArg(kv))
		}
	}
	for _, h := range f.headers {
		name, _, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
			return usagef("--header %q: want 'Name: value'", truncateArg(h))
		}
		if f.oauth.set(fs) && strings.EqualFold(strings.TrimSpace(name), "Authorization") {
			return usagef("--header Authorization and --oauth-* both set: the OAuth client sends the Authorization header; keep one")
		}
	}
	if f.oauth.set(fs) && f.oauth.clientID == "" && (f.oauth.refreshToken == "" || f.oauth.clientSecret != "" || f.oauth.privateKeyFile != "") {
		// Only a refresh token may go without it: the client 'mcpwatch
		// login' kept beside it is used.
		return usagef("--oauth-client-id is required with the other --oauth-* flags (but for --oauth-refresh-token alone, after 'mcpwatch login')")
	}
	f.oauthOn = f.oauth.set(fs)
	if f.oauthOn {
		return f.oauth.check()
	}
	return nil
}

// truncateArg shows the start of a malformed flag value: enough to find it,
// too little to print a whole credential.
func truncateArg(s string) string {
	if i := strings.IndexAny(s, "=:"); i >= 0 {
		return s[:i+1] + "…"
	}
	return sanitize.Truncate(s, 12)
}

func oneOf(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return usagef("--%s %q: want one of %s", flag, value, strings.Join(allowed, ", "))
}

func (f *probeFlags) options() (probe.Options, error) {
	size, err := bytesize.Parse(f.maxMessage)
	if err != nil {
		return probe.Options{}, usagef("--max-message-bytes: %v", err)
	}
	return probe.Options{
		MaxMessageBytes: size,
		ClientName:      "mcpwatch",
		ClientVersion:   version.Version,
		Transcript:      f.transcript,
	}, nil
}

// describeTarget names what was probed, for the text output: the command
// as given (before expansion, so no secret shows) or the URL redacted as
// 'mcpwatch config check' shows one (no user info, query values or
// fragment).
func describeTarget(f *probeFlags) string {
	if f.url != "" {
		return expand.RedactURL(f.url)
	}
	return strings.Join(f.command, " ")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/version"
	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/util/browser"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

const loginHelp = `Usage:
  mcpwatch login [flags] SERVER
  mcpwatch login [flags] --url URL --oauth-refresh-token '${file:PATH}'

Signs in once, in a browser, for a remote server whose authorization server
wants a person's consent (the OAuth authorization code grant with PKCE, as
the MCP authorization spec describes it for a native client), and stores
the refresh token it grants where the server's auth: block says. The daemon
and check then refresh with it, and keep the rotated one, unattended.

SERVER is a server of the configuration whose auth: block reads

    auth:
      type: oauth
      grant: refresh_token
      refresh_token: ${file:/var/lib/mcpwatch/remote.refresh}
      # client_id: my-client        # when the authorization server knows one

Step by step:
  1. discovery, as a probe does it: the server's 401 names its protected
     resource metadata, which names the authorization server;
  2. the client: the configured client_id (and secret); else, where the
     authorization server supports them, mcpwatch's Client ID Metadata
     Document (--client-metadata-url); else a client registered now (RFC
     7591), kept in FILE.client.json beside the refresh token (mode 0600)
     and reused by the next login and by the daemon;
  3. the browser opens the authorization URL ($BROWSER if set, else the
     system's opener), through a start page on loopback that keeps the
     URL's state off command lines (a second visit ends the sign-in); the
     URL is printed too, to open anywhere, and only printed with
     --no-browser; the answer comes back to
     http://127.0.0.1:PORT/callback on this machine, its state checked;
  4. the code is exchanged (PKCE S256, the resource parameter); the refresh
     token is written to the file, atomically, mode 0600, never through a
     symlink; then the server is probed with the new access token.
     An authorization server that grants an access token alone: that is
     stored there instead (same file rules, with its expiry from
     expires_in or a JWT exp) and used until it expires; then the server
     is credential_missing until you run login again.

Scopes: auth.scopes, else the 401 challenge's, else the server's
scopes_supported; offline_access is added when the authorization server
lists it. A 403 insufficient_scope gets one more sign-in with its scope.

Over SSH, with no browser on the machine: run with --no-browser, open the
printed URL on your own computer, and forward the callback port first
(ssh -L PORT:127.0.0.1:PORT, with a fixed --redirect-port).

Exit codes: 0 signed in and the server probed; 1 the sign-in or the probe
after it failed (the message names the step: discovery, client
registration, authorization, token exchange, store); 2 usage error; 78 the
configuration is unusable.

Flags:
%s
Examples:
  # Sign in for the server "remote" of ./mcpwatch.yml:
  mcpwatch login remote

  # An ad-hoc server, the refresh token stored in a file of your choice:
  mcpwatch login --url https://mcp.example.com/mcp \
      --oauth-refresh-token '${file:/var/lib/mcpwatch/example.refresh}'
`

// loginFlags are mcpwatch login's flags: the configuration (or an ad-hoc
// server with probe's remote flags and --oauth-*), and how to reach the
// person signing in.
type loginFlags struct {
	configFile   string
	server       string
	timeout      time.Duration
	noBrowser    bool
	redirectPort int
	metadataURL  string

	url        string
	transport  string
	headers    []string
	caFile     string
	insecure   bool
	era        string
	maxMessage string
	oauth      oauthFlags
}

// loginProbeGrace is how long the probe of a login may go on after the
// sign-in's deadline (--timeout).
const loginProbeGrace = 15 * time.Second

// loginAdHocFlags apply to --url only.
var loginAdHocFlags = append([]string{"transport", "header", "ca-file", "insecure", "era", "max-message-bytes"}, oauthFlagNames...)

func newLoginFlagSet(f *loginFlags) *pflag.FlagSet {
	fs := newFlagSet("login")
	fs.StringVarP(&f.configFile, "config.file", "c", "", configFileUsage)
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for the sign-in (discovery, the browser, the token exchange); the probe after it gets 15s more")
	fs.BoolVar(&f.noBrowser, "no-browser", false, "print the authorization URL only: open it yourself, on any machine whose browser can reach this one's callback port")
	fs.IntVar(&f.redirectPort, "redirect-port", 0, "`port` of the redirect URI http://127.0.0.1:PORT/callback (default: a free one)")
	fs.StringVar(&f.metadataURL, "client-metadata-url", "", "`URL` of the Client ID Metadata Document used as the client_id where the authorization server supports them (default: mcpwatch's)")
	fs.StringVar(&f.url, "url", "", "`URL` of an ad-hoc remote server, instead of SERVER")
	fs.StringVar(&f.transport, "transport", "auto", "with --url: auto (streamable HTTP, then legacy SSE), http or sse")
	fs.StringArrayVar(&f.headers, "header", nil, "with --url: `'Name: value'` sent with every request (repeatable)")
	fs.StringVar(&f.caFile, "ca-file", "", "with --url: PEM `file` of the CA that signs the server's certificate")
	fs.BoolVar(&f.insecure, "insecure", false, "with --url: skip TLS certificate verification (test servers only)")
	fs.StringVar(&f.era, "era", "auto", "with --url: protocol era: auto, modern or legacy")
	fs.StringVar(&f.maxMessage, "max-message-bytes", "4MiB", "with --url: largest JSON-RPC message or HTTP body accepted (`size`)")
	f.oauth.register(fs)
	return fs
}

func (f *loginFlags) check(fs *pflag.FlagSet) error {
	switch {
	case fs.NArg() > 1:
		return usagef("unexpected argument %q: give one SERVER", fs.Arg(1))
	case fs.NArg() == 1 && f.url != "":
		return usagef("give either SERVER or --url, not both")
	case fs.NArg() == 0 && f.url == "":
		return usagef("give the SERVER to sign in for, or --url")
	case f.timeout <= 0:
		return usagef("--timeout must be positive, got %s", f.timeout)
	case f.redirectPort < 0 || f.redirectPort > 65535:
		return usagef("--redirect-port %d: want a port, 1 to 65535 (0: a free one)", f.redirectPort)
	}
	f.server = fs.Arg(0)
	if f.url == "" {
		for _, name := range loginAdHocFlags {
			if fs.Changed(name) {
				return usagef("--%s applies to --url only; for SERVER it comes from the configuration", name)
			}
		}
		return nil
	}
	if fs.Changed("config.file") {
		return usagef("--config.file applies to SERVER only")
	}
	if !strings.Contains(f.oauth.refreshToken, "${file:") {
		return usagef("--url needs --oauth-refresh-token '${file:PATH}': the file the refresh token is stored in")
	}
	if f.oauth.grant != "" && f.oauth.grant != oauth.GrantRefreshToken {
		return usagef("--oauth-grant %q: login signs in for grant refresh_token", f.oauth.grant)
	}
	if err := checkEra(f.era); err != nil {
		return err
	}
	if _, err := bytesize.Parse(f.maxMessage); err != nil {
		return usagef("--max-message-bytes: %v", err)
	}
	_, err := remoteTransport(f.transport)
	return err
}

// adHocServer is the server --url and its flags describe.
func (f *loginFlags) adHocServer() config.Server {
	transport, _ := remoteTransport(f.transport) // checked by check
	s := config.Server{
		Name: "--url " + expand.RedactURL(f.url), URL: f.url, Transport: transport, Era: probe.Era(f.era),
		CAFile: f.caFile, Insecure: f.insecure, Headers: headerMap(f.headers), Auth: f.oauth.auth(),
	}
	s.Auth.Grant = oauth.GrantRefreshToken
	return s
}

func cmdLogin(ctx context.Context, c *cli, args []string) int {
	var f loginFlags
	fs := newLoginFlagSet(&f)
	if code, ok := parseArgs(c, fs, loginHelp, args, func() error { return f.check(fs) }); !ok {
		return code
	}
	var s config.Server
	if f.url != "" {
		s = f.adHocServer()
	} else {
		cfg, source, err := loadConfig(f.configFile, c.getenv)
		if err != nil {
			fmt.Fprintf(c.stderr, "mcpwatch login: configuration %s is unusable: %v\n", source, err)
			return exitConfig
		}
		var found bool
		if s, found = cfg.Server(f.server); !found {
			i := slices.IndexFunc(cfg.Ignored, func(x config.Server) bool { return x.Name == f.server })
			if i < 0 {
				var names []string
				for _, x := range cfg.Servers {
					if x.URL != "" && x.Auth != nil {
						names = append(names, x.Name)
					}
				}
				known := "none of its servers has an auth: block"
				if len(names) > 0 {
					known = "servers with an auth: block: " + strings.Join(names, ", ")
				}
				fmt.Fprintf(c.stderr, "mcpwatch login: %s has no server %q (%s)\nRun 'mcpwatch login --help' for usage.\n", source, sanitize.Text(f.server), known)
				return exitUsage
			}
			s = cfg.Ignored[i]
		}
		if s.URL == "" {
			fmt.Fprintf(c.stderr, "mcpwatch login: server %q is a command: it takes its credentials through env, and there is nothing to sign in to\n", s.Name)
			return exitConfig
		}
	}
	if s.Auth == nil || s.Auth.Grant != oauth.GrantRefreshToken {
		_, err := launch.LoginOAuth(s, c.lookupEnv)
		fmt.Fprintf(c.stderr, "mcpwatch login: %v\n", err)
		return exitConfig
	}

	size, _ := bytesize.Parse(f.maxMessage)
	l := &oauth.Login{Out: c.stderr, ClientMetadataURL: f.metadataURL, RedirectPort: f.redirectPort,
		Deadline: time.Now().Add(f.timeout),
		Browser:  func(_ context.Context, u string) error { return browser.Open(u, c.getenv) }}
	if f.noBrowser {
		l.Browser = func(context.Context, string) error { return errors.New("--no-browser: open the URL above yourself") }
	}
	obs := runner.Probe(ctx, runner.NewPool(1, 1), s, runner.Request{
		// The sign-in gives up at --timeout; the probe a little later, so
		// that a sign-in that ends late still gets its probe, and one that
		// does not end says so in its own words.
		Lookup: c.lookupEnv, Timeout: f.timeout + loginProbeGrace, Login: l,
		Options: probe.Options{ClientName: "mcpwatch", ClientVersion: version.Version, MaxMessageBytes: size},
	})
	return reportLogin(c.stdout, s.Name, obs)
}

// reportLogin says what the login did: where the refresh token and the
// client are, and whether the server then answered with the new token.
func reportLogin(w io.Writer, server string, obs runner.Observation) int {
	res, o := obs.Result, obs.Login
	if o == nil {
		if res.OK {
			fmt.Fprintf(w, "%s asked for no authorization: there was nothing to sign in to, and its auth: block is not needed\n", server)
			return exitConfig
		}
		fmt.Fprintf(w, "FAILED (%s): login for %s\n  error      %s\n", res.Reason, server, sanitize.Text(res.Error))
		if res.Reason == probe.ReasonConfig {
			return exitConfig
		}
		return exitFailed
	}
	how := map[string]string{
		oauth.ConfiguredClient:             "the configured client",
		oauth.RegisteredByMetadataDocument: "mcpwatch's Client ID Metadata Document",
		oauth.RegisteredDynamically:        "a client registered for mcpwatch (RFC 7591)",
	}[o.ClientBy]
	if o.Reused {
		how += ", kept from an earlier login"
	}
	fmt.Fprintf(w, "signed in: %s, at authorization server %s\n", server, sanitize.Text(o.Issuer))
	fmt.Fprintf(w, "  client         %s (%s)\n", sanitize.Text(o.ClientID), how)
	if o.AccessTokenOnly {
		fmt.Fprintf(w, "  access token   stored in %s (mode 0600)\n", o.RefreshTokenFile)
	} else {
		fmt.Fprintf(w, "  refresh token  stored in %s (mode 0600)\n", o.RefreshTokenFile)
	}
	if o.RegistrationFile != "" {
		fmt.Fprintf(w, "  client kept    in %s (mode 0600): the daemon refreshes as this client\n", o.RegistrationFile)
	}
	if len(o.Scopes) > 0 {
		fmt.Fprintf(w, "  scopes         %s\n", sanitize.Text(strings.Join(o.Scopes, " ")))
	}
	if o.AccessTokenOnly {
		// No refresh token: the sign-in lasts as long as the access token.
		if o.Expiry.IsZero() {
			fmt.Fprintf(w, "  no refresh token: the access token does not say it expires, so mcpwatch watches with it until the server refuses it; then run 'mcpwatch login %s' again\n", server)
		} else {
			fmt.Fprintf(w, "  no refresh token: mcpwatch watches until %s, then run 'mcpwatch login %s' again (McpCredentialExpiringSoon warns ahead)\n",
				o.Expiry.UTC().Format(time.RFC3339), server)
		}
		fmt.Fprintf(w, "  to sign in once for good: %s\n", sanitize.Text(o.NoRefreshHint))
	}
	if !res.OK {
		fmt.Fprintf(w, "the %s is stored, but the probe with the new token FAILED (%s): %s\n", map[bool]string{true: "access token", false: "refresh token"}[o.AccessTokenOnly], res.Reason, sanitize.Text(res.Error))
		return exitFailed
	}
	fmt.Fprintf(w, "  probe          ok: %d %s with the new token\n", len(res.Tools), plural(len(res.Tools), "tool", "tools"))
	return exitOK
}

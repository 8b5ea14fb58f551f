package launch

// Package launch is probe time: what a server's configuration (internal/
// config, plain data) becomes when one probe starts. Build is the one step
// that makes a loaded server ready for one probe: every ${...} expanded, every file it names read
// (the env file, ${file:...} secrets, the CA, the OAuth private key and
// refresh token), its OAuth client made, and its deadline set. The daemon,
// check, lock, init and login call it once per probe, so a rotated secret
// is seen without a restart; the probe gets bytes, never a path to read.

import (
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
)

// BuildOptions say how a server is probed this once. Zero values take the
// server's own settings.
type BuildOptions struct {
	// Timeout, when positive, replaces the server's own deadline (the
	// CLI's --timeout).
	Timeout time.Duration
	// Warm says the server's command has started since it was last
	// (re)configured: it no longer gets its start_timeout (ProbeTimeout).
	Warm bool
	// Calls makes the server's canary calls (its contracts, and its
	// calls: auto); AutoCalls, when positive, asks for that many auto
	// calls whatever the configuration says.
	Calls     bool
	AutoCalls int
	// OAuth keeps the OAuth clients of servers with an auth: block across
	// probes; nil makes a new client for this probe alone.
	OAuth *oauth.Cache
	// Login signs in for the server's auth: block instead of using its
	// stored refresh token (mcpwatch login): the refresh token's file is
	// resolved but not read.
	Login *oauth.Login
	// Listen builds the target of a listening stream: its OAuth client is
	// made even when a credential is missing (a probe is not made then).
	Listen bool
}

// Built is a server made ready for one probe: plain values, nothing left
// to read or expand.
type Built struct {
	// Target is complete: expanded, its env file and secret files read,
	// its CA's bytes, its OAuth client in Auth. Zero when Build failed.
	Target probe.Target
	// Written is the command line and URL as configured, unexpanded: what
	// the scrubber tells a secret's place by.
	Written probe.Target
	// Given are the credentials the server is given (see Resolve), and
	// Missing those among them that have no value now: a probe is not
	// made, and Target has no OAuth client.
	Given, Missing []probe.GivenCredential
	// Client is Target's OAuth client; nil for a server without an auth:
	// block.
	Client *oauth.Client
	// Transport is the configured transport, for a probe that never
	// starts.
	Transport probe.Transport
	// Timeout is the probe's deadline, its calls' included.
	Timeout time.Duration
	// Calls says the server's own canary calls are made; Auto is how many
	// auto-chosen calls are made besides (0: none).
	Calls bool
	Auto  int
	// Contracts are the server's canary calls (made when Calls is set),
	// CallTimeout each call's deadline, and AllowDestructive the tools
	// the configuration opts in to destructive calls.
	Contracts        []contracts.Contract
	CallTimeout      time.Duration
	AllowDestructive []string
	// Install says how the server's command installs what it runs, for
	// explaining a first start's timeout; Installs is "" when it does not.
	Install config.Install
	// IssuerCheck says the services that issued the server's credentials
	// may be asked about them (issuer_check).
	IssuerCheck bool
}

// DestructiveAllowed reports whether the configuration opts tool in to
// destructive canary calls.
func (b Built) DestructiveAllowed(tool string) bool { return slices.Contains(b.AllowDestructive, tool) }

// Build makes s (normalized, as config.Load leaves every server) ready for one
// probe with lookup reading the variables (os.LookupEnv fits; nil reads
// none). Everything but the target is set whatever happens, for a probe
// that never starts. The error is a wiring fault (an unset variable, a
// secret file that cannot be read, an unusable auth: block), naming the
// server, the file, the key or the variable, never a value; a credential
// that is there but empty is no error but a Missing one.
func Build(s config.Server, lookup func(string) (string, bool), o BuildOptions) (Built, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	calls := o.Calls && s.HasCalls()
	auto := max(o.AutoCalls, 0)
	if calls {
		auto = max(auto, s.AutoCalls) // the configuration's calls: auto
	}
	b := Built{
		Written:          probe.Target{Command: s.Command, Args: s.Args, URL: s.URL},
		Transport:        s.Transport,
		Timeout:          s.CallDeadline(s.ProbeTimeout(o.Timeout, !o.Warm), calls, auto),
		Calls:            calls,
		Auto:             auto,
		Contracts:        s.Contracts,
		CallTimeout:      s.CallTimeout,
		AllowDestructive: s.AllowDestructive,
		Install:          s.Install(),
		IssuerCheck:      !s.NoIssuerCheck,
	}
	target, given, errs := target(s, lookup, false)
	b.Given, b.Missing = given, Missing(given)
	if len(errs) > 0 {
		return b, errs[0]
	}
	if len(b.Missing) > 0 && !o.Listen {
		return b, nil
	}
	client, err := authorize(s, target.URL, lookup, o.OAuth, o.Login)
	if err != nil {
		return b, err
	}
	b.Client = client
	if client != nil { // a nil client left out: no typed nil in the interface
		target.Auth = client
	}
	b.Target = target
	return b, nil
}

// authorize makes the OAuth client of a server with an auth: block (nil
// for none): the cache's (tokens kept across probes), or a new one for
// this probe alone; with login, a new one that signs in.
func authorize(s config.Server, url string, lookup func(string) (string, bool), cache *oauth.Cache, login *oauth.Login) (*oauth.Client, error) {
	read := OAuth
	if login != nil {
		read = LoginOAuth
	}
	oc, err := read(s, lookup)
	if err != nil || oc == nil {
		return nil, err
	}
	oc.ServerURL = url
	if login != nil {
		oc.Grant, oc.Login = oauth.GrantAuthorizationCode, login
	}
	if cache != nil && login == nil {
		return cache.Client(*oc)
	}
	return oauth.New(*oc)
}

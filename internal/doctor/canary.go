package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// checkCanaries: every checked server given a credential has a canary
// that sees it, by the one table of which canary watches a server's
// credential (internal/canary, as mcpwatch init prints it). A server that
// keeps listing its tools when its credential expires passes the lock;
// only a call notices. doctor starts no server, so the table reads the
// tools as the lock holds them; a server the lock does not cover has a
// finding of its own.
func (d *doctor) checkCanaries(cfg *config.Config, servers []config.Server, lock *lockstore.Lock) {
	var watched []string
	for _, s := range servers {
		entry, locked := lock.Entry(s.Name)
		if !locked {
			continue
		}
		// Every variable answered, so that Resolve names each credential
		// the server is given; whether CI gives it a value is
		// judgeCredentials'.
		t, given, err := launch.Resolve(s, everySet)
		row := canary.Watch(canaryServer(s, given, entry))
		var issuers []string
		if err == nil {
			issuers = expectedIssuers(s, t)
		}
		switch {
		case !row.Watched && len(issuers) > 0:
			watched = append(watched, fmt.Sprintf("%s by its issuer (%s)", s.Name, strings.Join(issuers, "; ")))
		case row.Watched && row.Canary == "calls: auto":
			watched = append(watched, fmt.Sprintf("%s by calls: auto, if it annotates a read-only tool that needs no input", s.Name))
		case row.Watched:
			watched = append(watched, fmt.Sprintf("%s by %s (%d calls a month)", s.Name, row.Canary, row.CallsAMonth))
		case row.Credential == "-":
			// nothing for a canary to watch
		default:
			file, line := d.rel(s.Source), serverLine(s)
			target := "a contracts file that an mcpwatch.yml names under the server"
			if f, ok := cfg.ContractsTarget(s); ok {
				target = d.rel(f)
			}
			fix := fmt.Sprintf("give server %q a canary: run mcpwatch init, which writes %s with contracts for its tools that read, and enable one (fill in its input); or write a contract for a tool that only reads there yourself, or set calls: auto (docs/contracts.md)", s.Name, target)
			if s.ContractsFile != "" {
				file, line = d.rel(s.ContractsFile), 1
				fix = fmt.Sprintf("enable a contract in %s for a tool of server %q that only reads, with an input that works (docs/contracts.md)", d.rel(s.ContractsFile), s.Name)
			}
			d.add(finding("canary", file, line,
				fmt.Sprintf("server %q is given %s; %s. When it expires or is revoked, a server that still lists its tools passes the lock: only a call notices", s.Name, row.Credential, row.Note),
				fix))
		}
	}
	if len(watched) > 0 {
		d.verified("canaries: %s", strings.Join(watched, ", "))
	}
}

// expectedIssuers says where a server's credentials would be checked at
// their issuers (internal/issuer), from its configuration alone: doctor
// reads no secret, so each is checked only when its value turns out to
// have its service's format.
func expectedIssuers(s config.Server, t probe.Target) []string {
	if s.NoIssuerCheck {
		return nil
	}
	var out []string
	for _, tie := range issuer.Expect(runner.IssuerServer(t)) {
		if tie.Skip == "" {
			out = append(out, fmt.Sprintf("%s -> %s, if it has %s's format", tie.Credential, tie.Endpoint(), tie.Service.Service))
		}
	}
	return out
}

// everySet answers every variable as set: what doctor, which reads no
// secret, asks of a server's configuration.
func everySet(string) (string, bool) { return "set", true }

// canaryServer is what the canary table needs of s: its credentials by
// name, its contracts, and its tools as locked.
func canaryServer(s config.Server, given []probe.GivenCredential, entry lockstore.Entry) canary.Server {
	var creds []string
	for _, g := range given {
		creds = append(creds, g.Credential)
	}
	slices.Sort(creds)
	cs := append(append(slices.Clone(s.Contracts), s.Pending...), s.Held...)
	for _, tool := range s.Proposed {
		cs = append(cs, contracts.Contract{Tool: tool, Disabled: true})
	}
	res := &probe.Result{OK: true}
	for _, name := range entry.Names() {
		res.Tools = append(res.Tools, probe.Tool{Name: name})
	}
	return canary.Server{Name: s.Name, Credentials: creds, Result: res, Contracts: cs,
		ContractsFile: s.ContractsFile, AutoCalls: s.AutoCalls, FromLock: true,
		Command: s.Command, Args: s.Args, URL: s.URL,
		Plan: func(c contracts.Contract) (int, string) {
			p := s.CallPlan(c)
			return p.PerMonth(), p.Why
		}}
}

// serverLine is the line of the file that defines s where its name is
// written as a key: "NAME" in JSON, NAME: in YAML.
func serverLine(s config.Server) int {
	if ext := strings.ToLower(filepath.Ext(s.Source)); ext == ".json" || ext == ".jsonc" {
		return locate(s.Source, `"`+s.Name+`"`)
	}
	return locate(s.Source, s.Name+":")
}

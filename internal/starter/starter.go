// Package starter is mcpwatch init: from a configuration that has only
// servers (a .mcp.json), everything a credential watch needs. It probes
// every server once, samples the answers of the tools that are safe to
// call (annotated readOnlyHint: true, no required input), writes the lock
// and a starter contracts file per server (package canary proposes what
// goes in it), and says per server which canary watches its credential.
//
// Run again, it only adds: servers the lock does not have yet, contracts
// for tools a file has none for. It never changes a lock entry, nor a
// byte of a contracts file that is there (canary.Extend), so a person's
// edits stay; it never locks or proposes from a failed probe.
package starter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/canary"
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// MaxSamples bounds the sample calls of one server: each is a read-only
// tool that needs no input, and each adds a call timeout to the probe's
// deadline.
const MaxSamples = 8

// sampleTimeout bounds a sample call: one slower than canary.MaxSampleTime
// is proposed disabled anyway.
const sampleTimeout = canary.MaxSampleTime + time.Second

// Options shape a run.
type Options struct {
	// Preflight are the probes' bounds, the environment and the version.
	Preflight preflight.Options
	// Dir is where paths in the text start (the working directory);
	// "" prints them absolute.
	Dir string
	// Lock is the lock file to add to; default the configuration's. The
	// contracts files are beside the configuration's lock either way,
	// where every command looks for them (config.StarterFile).
	Lock string
	// NoCatalogue leaves the catalogue of vetted canaries out: a server
	// it would match gets what its annotations alone allow.
	NoCatalogue bool
}

// Result is what one init did.
type Result struct {
	Config string
	Lock   string
	// LockOutcome: "written", "unchanged" or "not written" (no server
	// could be locked, or the lock could not be read or written: Error).
	LockOutcome string
	// Locked are the servers the lock gained; LockKept those it had
	// already, whose entries stayed as they were.
	Locked, LockKept []string
	Servers          []Server
	Rows             []canary.Row
	Duration         time.Duration
	// Error is a failure of the run as a whole (the lock); each server's
	// own is in its Server.
	Error string
}

// Server is what init did for one server.
type Server struct {
	Name   string
	Result *probe.Result
	// NotLocked says why the server is not in the lock, when it is not.
	NotLocked string
	// File is its contracts file; FileOutcome "written", "extended",
	// "unchanged", "none" (nothing to propose, no file) or "not written"
	// (FileError says why).
	File        string
	FileOutcome string
	FileError   string
	// Entries are what init proposes now; Merge what it did to a file
	// that was there.
	Entries []canary.Entry
	Merge   canary.Merge
}

// Failed reports whether init did not do everything for every server: a
// probe failed, a server could not be locked, or a file could not be
// written. The command exits 78 then.
func (r *Result) Failed() bool {
	if r.Error != "" {
		return true
	}
	for _, s := range r.Servers {
		if !s.Result.OK || s.NotLocked != "" || s.FileError != "" {
			return true
		}
	}
	return false
}

// Run is mcpwatch init on cfg's servers (the ignored ones left out).
func Run(ctx context.Context, cfg *config.Config, opts Options) *Result {
	started := time.Now()
	r := &Result{Config: cfg.Path, Lock: cfg.Lock}
	if opts.Lock != "" {
		r.Lock = opts.Lock
	}
	popts := opts.Preflight
	popts.AutoCalls = MaxSamples
	servers := make([]config.Server, len(cfg.Servers))
	for i, s := range cfg.Servers {
		// A sample slower than a canary may be is proposed disabled
		// whatever it answers: no need to wait longer for it.
		s.CallTimeout = min(s.CallTimeout, sampleTimeout)
		servers[i] = s
	}
	observations := preflight.Observe(ctx, servers, popts)
	for _, obs := range observations {
		r.Servers = append(r.Servers, Server{Name: obs.Server.Name, Result: obs.Result})
	}
	if ctx.Err() != nil {
		r.Error, r.LockOutcome = "interrupted: nothing written", "not written"
		r.Duration = time.Since(started)
		return r
	}
	r.lock(observations)
	for i, obs := range observations {
		s := &r.Servers[i]
		if obs.Result.OK {
			s.contracts(obs, cfg, !opts.NoCatalogue)
		}
		r.Rows = append(r.Rows, canary.Watch(s.watched(obs, opts.Dir)))
	}
	r.Duration = time.Since(started)
	return r
}

// lock adds the servers that were probed and are not in the lock yet.
// Entries already there are kept: the lock is the committed expectation,
// which only 'mcpwatch lock' changes, after review.
func (r *Result) lock(observations []preflight.Observation) {
	r.LockOutcome = "not written"
	seen, _ := os.Stat(r.Lock)
	old, err := lockstore.Read(r.Lock)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		r.Error = fmt.Sprintf("%v; init adds to a lock it can read: fix it, or move it away to start afresh", err)
		return
	}
	var add []preflight.Observation
	for i, obs := range observations {
		s := &r.Servers[i]
		switch _, locked := old.Entry(obs.Server.Name); {
		case !obs.Result.OK:
			s.NotLocked = "the probe failed: nothing observed is locked"
		case locked:
			r.LockKept = append(r.LockKept, obs.Server.Name)
		default:
			add = append(add, obs)
		}
	}
	// Relock refuses a server that listed no tools or a tool name that
	// holds a secret: those are left out, the others locked.
	for len(add) > 0 {
		plan, err := preflight.Relock(old, add, preflight.RelockOptions{})
		if err != nil {
			r.Error = err.Error()
			return
		}
		if len(plan.Refused) == 0 {
			r.writeLock(plan.Lock, old == nil, seen, add)
			return
		}
		for _, ref := range plan.Refused {
			add = slices.DeleteFunc(add, func(o preflight.Observation) bool { return o.Server.Name == ref.Server })
			r.server(ref.Server).NotLocked = ref.Message
		}
	}
	if old != nil {
		r.LockOutcome = "unchanged"
	}
}

func (r *Result) writeLock(l *lockstore.Lock, fresh bool, seen os.FileInfo, added []preflight.Observation) {
	now, err := os.Stat(r.Lock)
	if changed := (seen == nil) != (err != nil) || seen != nil && (!os.SameFile(seen, now) || !seen.ModTime().Equal(now.ModTime()) || seen.Size() != now.Size()); changed {
		r.Error = fmt.Sprintf("%s changed while the servers were probed; review it and run 'mcpwatch init' again", r.Lock)
		return
	}
	if fresh {
		if err := os.MkdirAll(filepath.Dir(r.Lock), 0o755); err != nil { //nolint:gosec // G301: a folder of files to commit, read by the team
			r.Error = err.Error()
			return
		}
	}
	if err := lockstore.Write(r.Lock, l); err != nil {
		r.Error = err.Error()
		return
	}
	r.LockOutcome = "written"
	for _, o := range added {
		r.Locked = append(r.Locked, o.Server.Name)
	}
}

func (r *Result) server(name string) *Server {
	for i := range r.Servers {
		if r.Servers[i].Name == name {
			return &r.Servers[i]
		}
	}
	return &Server{}
}

// contracts writes or extends the server's contracts file with what
// canary proposes from its tools and the samples of this probe.
func (s *Server) contracts(obs preflight.Observation, cfg *config.Config, catalogue bool) {
	path, ok := cfg.ContractsTarget(obs.Server)
	if !ok {
		s.FileOutcome = "not written"
		s.FileError = "a server without a name has no starter contracts file; name it, or write its contracts in a file and name that with contracts: in mcpwatch.yml"
		return
	}
	s.File = path
	samples := map[string]canary.Sample{}
	for _, o := range obs.Calls {
		if o.Auto {
			samples[o.Tool] = canary.Sample{Outcome: o}
		}
	}
	var vetted *canary.CatalogueEntry
	if catalogue {
		if v, ok := canary.Vetted(obs.Server.Command, obs.Server.Args, obs.Server.URL, obs.Result.Tools); ok {
			vetted = &v
		}
	}
	s.Entries = canary.ProposeVetted(obs.Server.Name, path, obs.Result.Tools, samples, vetted)

	old, err := readfile.Read(path, config.MaxContractsFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if len(s.Entries) == 0 {
			s.FileOutcome = "none"
			return
		}
		s.write(path, nil, canary.File(fileComment(obs.Server.Name), s.Entries), "written")
	case err != nil:
		s.FileOutcome, s.FileError = "not written", fmt.Sprintf("%v; init left it as it is", err)
	default:
		var listed []string
		for _, t := range obs.Result.Tools {
			listed = append(listed, t.Name)
		}
		out, m, err := canary.Extend(old, s.Entries, listed)
		s.Merge = m
		switch {
		case err != nil:
			s.FileOutcome, s.FileError = "not written", fmt.Sprintf("%s is not a contracts file init can add to (%v); init left it as it is: fix it, or move it away for a fresh one", path, err)
		case bytes.Equal(out, old):
			s.FileOutcome = "unchanged"
		default:
			s.write(path, old, out, "extended")
		}
	}
}

// write writes a contracts file, unless it changed since it was read (a
// person saving it while the servers were probed): then it is left alone.
func (s *Server) write(path string, was, data []byte, outcome string) {
	now, err := readfile.Read(path, config.MaxContractsFileBytes)
	if changed := (was == nil) != errors.Is(err, fs.ErrNotExist) || was != nil && !bytes.Equal(now, was); changed {
		s.FileOutcome, s.FileError = "not written", path+" changed while init ran; run 'mcpwatch init' again"
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: a folder of files to commit, read by the team
		s.FileOutcome, s.FileError = "not written", err.Error()
		return
	}
	if err := atomicfile.Write(path, data); err != nil {
		s.FileOutcome, s.FileError = "not written", err.Error()
		return
	}
	s.FileOutcome = outcome
}

func fileComment(server string) string {
	return fmt.Sprintf("Canary contracts of server %s, started by mcpwatch init. Each tool's \"$comment\" says what it takes; edit freely: 'mcpwatch init' run again only adds contracts for new tools and changes nothing here. Reference: docs/contracts.md of mcpwatch.", server)
}

// watched is what the table needs of the server: its credentials as the
// probe saw them, and the contracts its file holds now.
func (s *Server) watched(obs preflight.Observation, dir string) canary.Server {
	w := canary.Server{Name: s.Name, Result: s.Result, ContractsFile: display(s.File, dir), AutoCalls: obs.Server.AutoCalls,
		Command: obs.Server.Command, Args: obs.Server.Args, URL: obs.Server.URL, Plan: plan(obs.Server)}
	for _, e := range s.Entries {
		// The catalogue's contract, unless a person's edit made it theirs.
		if e.Catalogue != "" && !slices.Contains(s.Merge.Edited, e.Tool) {
			w.Catalogue = map[string]string{e.Tool: e.Catalogue}
		}
	}
	if c := s.Result.Credentials; c != nil {
		for _, g := range c.Given {
			w.Credentials = append(w.Credentials, g.Credential)
		}
	}
	// A database server takes its password in a URL argument. Written as a
	// reference it is a credential the probe checks (arg:userinfo, in
	// Given); written literally, it is still one a canary can watch.
	if !slices.Contains(w.Credentials, "arg:userinfo") {
		for i, a := range obs.Server.Args {
			if secret.URLHasPassword(a) {
				w.Credentials = append(w.Credentials, fmt.Sprintf("args[%d]:password", i))
			}
		}
	}
	if s.File == "" {
		w.Contracts = append(append([]contracts.Contract{}, obs.Server.Contracts...), obs.Server.Pending...)
		return w
	}
	if data, err := readfile.Read(s.File, config.MaxContractsFileBytes); err == nil {
		if f, err := contracts.ParseFile(data); err == nil {
			w.Contracts = f.Sorted()
		}
	}
	return w
}

// plan is how often the daemon calls each contract of srv at the defaults
// (config.Server.CallPlan), for the table's calls a month.
func plan(srv config.Server) func(contracts.Contract) (int, string) {
	return func(c contracts.Contract) (int, string) {
		p := srv.CallPlan(c)
		return p.PerMonth(), p.Why
	}
}

// display is path relative to dir when it is under it.
func display(path, dir string) string {
	if path == "" || dir == "" {
		return path
	}
	if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

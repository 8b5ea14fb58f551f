package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/prometheus/common/version"
)

// preflightSetup is what check and lock read before probing.
type preflightSetup struct {
	cfg      *config.Config
	source   string // the configuration file, for messages
	lockPath string
	lock     *lockstore.Lock // nil when there is no lock file yet
	lockSeen os.FileInfo     // the lock file as readLock found it; nil if absent
	// skip names the servers left out: --skip, and ignore: but for those
	// --server names.
	skip []string
}

// loadPreflight loads the configuration. The returned setup names what it
// tried to read even when err is set, for the report.
func loadPreflight(c *cli, configFile, lockFile string) (*preflightSetup, error) {
	s := &preflightSetup{lockPath: lockFile}
	cfg, source, err := loadConfig(configFile, c.getenv)
	s.source = source
	if err != nil {
		return s, fmt.Errorf("configuration %s is unusable: %w", source, err)
	}
	s.cfg = cfg
	if cfg.Path != "" {
		s.source = cfg.Path
	}
	if s.lockPath == "" {
		s.lockPath = cfg.Lock
	}
	return s, nil
}

// readLock reads the lock. For check a missing lock is an error (there is
// nothing to compare with); for lock it is the first run.
func (s *preflightSetup) readLock(required bool) error {
	// Stat first: a write between the two makes lockChanged say so later,
	// never miss it.
	s.lockSeen, _ = os.Stat(s.lockPath)
	l, err := lockstore.Read(s.lockPath)
	switch {
	case err == nil:
		s.lock = l
		return nil
	case errors.Is(err, fs.ErrNotExist) && required:
		return fmt.Errorf("no lock file at %s; run 'mcpwatch lock' first to record the tools each server offers now, review it and commit it", s.lockPath)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// lockChanged reports whether the lock file is not the one readLock read:
// written, replaced, created or removed since.
func (s *preflightSetup) lockChanged() bool {
	now, err := os.Stat(s.lockPath)
	switch {
	case s.lockSeen == nil:
		return err == nil // created since
	case err != nil:
		return true // removed since
	}
	return !os.SameFile(s.lockSeen, now) || s.lockSeen.Size() != now.Size() || !s.lockSeen.ModTime().Equal(now.ModTime())
}

// selectServers checks the --server and --skip names: each must be a
// configured server, an ignored one, or (where lockOnly allows, and always
// for --skip) a locked one. An unknown name is a usage error naming the
// known ones. A --server naming an ignored server probes it: asking for it
// by name wins over ignore:.
func (s *preflightSetup) selectServers(f *preflightFlags, lockOnly bool) error {
	var known []string
	for _, srv := range s.cfg.Servers {
		known = append(known, srv.Name)
	}
	known = append(known, s.cfg.Ignore...)
	slices.Sort(known)
	unknown := func(flag, name string) error {
		return fmt.Errorf("%sunknown server %q; the configuration (%s) defines: %s", flag, name, s.source, strings.Join(known, ", "))
	}
	for _, name := range f.servers {
		if i := slices.IndexFunc(s.cfg.Ignored, func(srv config.Server) bool { return srv.Name == name }); i >= 0 {
			s.cfg.Servers = append(s.cfg.Servers, s.cfg.Ignored[i])
			continue
		}
		if slices.Contains(known, name) {
			continue
		}
		if slices.Contains(s.lock.Servers(), name) {
			if lockOnly {
				continue
			}
			return fmt.Errorf("server %q is in the lock but not in %s, so it cannot be probed; to drop it from the lock, run 'mcpwatch lock' without --server", name, s.source)
		}
		return unknown("", name)
	}
	for _, name := range f.skip {
		if !slices.Contains(known, name) && !slices.Contains(s.lock.Servers(), name) {
			return unknown("--skip: ", name)
		}
	}
	for _, name := range s.cfg.Ignore {
		if !slices.Contains(f.servers, name) {
			s.skip = append(s.skip, name)
		}
	}
	for _, name := range f.skip {
		if !slices.Contains(s.skip, name) {
			s.skip = append(s.skip, name)
		}
	}
	return nil
}

// probed returns the configured servers a run probes: the --server ones
// (default all), less the skipped ones.
func (s *preflightSetup) probed(servers []string) []config.Server {
	var out []config.Server
	for _, srv := range s.cfg.Servers {
		if (len(servers) == 0 || slices.Contains(servers, srv.Name)) && !slices.Contains(s.skip, srv.Name) {
			out = append(out, srv)
		}
	}
	return out
}

// options are the probe bounds of a run; noIssuer leaves the credentials'
// issuers unasked (--no-issuer-check).
func (s *preflightSetup) options(c *cli, timeout time.Duration, noIssuer bool) preflight.Options {
	d := s.cfg.Defaults
	opts := preflight.Options{
		Timeout:          timeout,
		NoIssuerCheck:    noIssuer,
		Concurrency:      d.Concurrency,
		StdioConcurrency: d.StdioConcurrency,
		Lookup:           c.lookupEnv,
		Version:          version.Version,
		Probe: probe.Options{
			MaxMessageBytes: d.MaxMessageBytes,
			ClientName:      "mcpwatch",
			ClientVersion:   version.Version,
		},
	}
	if s.cfg.Path == "" {
		// A client config has no concurrency settings, and the client
		// starts all its servers at once: so does the preflight.
		opts.StdioConcurrency = opts.Concurrency
	}
	return opts
}

package main

import (
	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/eracache"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/probe"
)

// eraFlags are check's and lock's say in how servers are probed: the era,
// and the environment of stdio servers.
type eraFlags struct {
	era        string
	inheritEnv bool
}

func addEraFlags(fs *pflag.FlagSet, f *eraFlags) {
	fs.StringVar(&f.era, "era", "", "protocol era of every server: auto (detect it afresh), modern or legacy (default: each server's own, auto unless configured, with the era it answered in last time as a hint)")
	fs.BoolVar(&f.inheritEnv, "inherit-env", false, "pass mcpwatch's whole environment to stdio servers instead of the minimal one (as defaults.inherit_env: true)")
}

func (f *eraFlags) check(fs *pflag.FlagSet) error {
	if !fs.Changed("era") {
		return nil
	}
	return checkEra(f.era)
}

// checkEra is the one check of an --era value, in every command that has
// the flag.
func checkEra(era string) error {
	return oneOf("era", era, string(probe.EraAuto), string(probe.EraModern), string(probe.EraLegacy))
}

// apply puts the flags into the servers and opts, and returns what saves
// the eras learnt. The era cache beside the lock gives hints unless --era
// decides every server's era; it learns either way.
func (f *eraFlags) apply(cfg *config.Config, lockPath string, opts *preflight.Options) (save func()) {
	names := make([]string, 0, len(cfg.Servers))
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		names = append(names, s.Name)
		if f.era != "" {
			s.Era = probe.Era(f.era)
		}
		if f.inheritEnv && s.Command != "" {
			s.InheritEnv = true
		}
	}
	cache := eracache.Load(eracache.PathFor(lockPath))
	cache.Keep(names)
	opts.Eras = cache
	if f.era != "" {
		opts.Eras = learnOnly{cache}
	}
	return func() {
		// A cache that cannot be written (a read-only checkout) costs the
		// next run its hints, nothing else.
		_ = cache.Save()
	}
}

// learnOnly records eras but gives no hints.
type learnOnly struct{ *eracache.Cache }

func (learnOnly) Hint(config.Server) probe.Era { return "" }

// applyServeEra is serve's --era: every server's era, at start and at
// every reload.
func applyServeEra(cfg *config.Config, era string) {
	if era == "" || cfg == nil {
		return
	}
	for i := range cfg.Servers {
		cfg.Servers[i].Era = probe.Era(era)
	}
	cfg.Defaults.Era = probe.Era(era)
}

package daemon

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/runner"
)

// serverPlan is a configured server with its schedule read.
type serverPlan struct {
	cfg      config.Server
	sched    schedule
	interval time.Duration
}

// plan reads every schedule of cfg, so that a configuration the scheduler
// cannot run is refused as a whole, before anything is swapped.
func plan(cfg *config.Config) ([]serverPlan, error) {
	plans := make([]serverPlan, 0, len(cfg.Servers))
	for _, srv := range cfg.Servers {
		spec := srv.Schedule
		if spec == "" {
			spec = cfg.Defaults.Schedule
		}
		if spec == "" {
			spec = "@every 30s"
		}
		sched, interval, err := parseSchedule(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", configName(cfg), srv.Name, err)
		}
		srv.Schedule = spec
		if srv.Timeout <= 0 {
			// config.Load gives every server the defaults' timeout; a
			// configuration built in code may leave that to here.
			srv.Timeout = cfg.Defaults.Timeout
		}
		plans = append(plans, serverPlan{cfg: srv, sched: sched, interval: interval})
	}
	return plans, nil
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "configuration"
	}
	return cfg.Path
}

// Reload reads the configuration file again and, if it loads and
// validates, swaps it in: removed servers vanish from every output at once
// (their running probe is canceled), added ones are probed within about a
// second, changed ones take their new settings and schedule. A file that
// does not load leaves the running configuration in force; the error is
// logged here and returned for the caller to show (not to log again).
func (d *Daemon) Reload() error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if d.ctx.Err() != nil {
		return ErrClosed
	}
	path := d.configPath()
	cfg, err := d.opts.Load(path)
	var plans []serverPlan
	if err == nil {
		plans, err = plan(cfg)
	}
	if err != nil {
		d.self.ReloadFailed()
		d.log.Error("configuration reload failed; the running configuration stays in force until the file is fixed",
			zap.String("config", path), zap.Error(err))
		return err
	}
	added, removed, changed := d.install(cfg, plans)
	d.self.ReloadSucceeded(time.Now())
	fields := []zap.Field{zap.String("config", path), zap.Int("servers", len(plans))}
	for _, f := range []struct {
		key   string
		names []string
	}{{"added", added}, {"removed", removed}, {"changed", changed}} {
		if len(f.names) > 0 {
			fields = append(fields, zap.Strings(f.key, f.names))
		}
	}
	d.log.Info("configuration reloaded", fields...)
	return nil
}

// configPath is the file a reload reads.
func (d *Daemon) configPath() string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.opts.ConfigFile != "" {
		return d.opts.ConfigFile
	}
	return d.cfg.Path
}

// install makes cfg the running configuration. Before Start, servers are
// only recorded: Start schedules the first round of all of them.
func (d *Daemon) install(cfg *config.Config, plans []serverPlan) (added, removed, changed []string) {
	// The lock is read before taking d.mu: a scrape must not wait on disk.
	type expected struct {
		names  []string
		locked bool
	}
	lockOf := make(map[string]expected, len(plans))
	for _, p := range plans {
		entry, locked := d.lock.entry(cfg.Lock, p.cfg.Name)
		lockOf[p.cfg.Name] = expected{expectedNames(entry, locked), locked}
	}

	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	running := !d.started.IsZero()

	keep := make(map[string]bool, len(plans))
	for _, p := range plans {
		name := p.cfg.Name
		keep[name] = true
		s, ok := d.servers[name]
		if !ok {
			s = newServer(d.ctx, p.cfg, p.sched, p.interval, d.opts.History)
			s.gen = d.nextGen()
			e := lockOf[name]
			s.setExpected(e.names, e.locked)
			d.servers[name] = s
			added = append(added, name)
			if running {
				d.table.add(slot{due: now.Add(jitter(typicalGap(p.sched, now), d.opts.AddedSpread)), name: name, gen: s.gen})
			}
			continue
		}
		if reflect.DeepEqual(s.cfg, p.cfg) {
			continue
		}
		changed = append(changed, name)
		rescheduled := s.cfg.Schedule != p.cfg.Schedule
		s.setConfig(p.cfg, p.interval, reachChanged(s.cfg, p.cfg))
		s.cfg, s.sched, s.interval = p.cfg, p.sched, p.interval
		if rescheduled && running {
			s.gen = d.nextGen()
			d.table.add(slot{due: p.sched.Next(now), name: name, gen: s.gen})
		}
	}
	for name, s := range d.servers {
		if keep[name] {
			continue
		}
		s.cancel()
		delete(d.servers, name)
		removed = append(removed, name)
		d.firstDone(name)
	}
	slices.Sort(removed)

	names := make([]string, 0, len(d.servers))
	for name := range d.servers {
		names = append(names, name)
	}
	slices.Sort(names)
	d.names = names
	d.cfg = cfg

	all, stdio := cfg.Defaults.Concurrency, cfg.Defaults.StdioConcurrency
	if all <= 0 {
		all = 16
	}
	if stdio <= 0 {
		stdio = 4
	}
	if d.pool == nil {
		d.pool = runner.NewPool(all, stdio)
	} else if a, s := d.pool.Sizes(); a != all || s != min(stdio, all) {
		d.pool = runner.NewPool(all, stdio)
	}
	return added, removed, changed
}

// nextGen returns a schedule generation never used before, so a slot left
// in the timetable by a removed server can never match a server added back
// under the same name. Called with d.mu held.
func (d *Daemon) nextGen() uint64 {
	d.gens++
	return d.gens
}

// reachChanged reports whether anything that decides which server a probe
// reaches, and how, differs; the schedule, timeout and forbid patterns do
// not.
func reachChanged(a, b config.Server) bool {
	a.Schedule, a.Timeout, a.Forbid = "", 0, nil
	b.Schedule, b.Timeout, b.Forbid = "", 0, nil
	return !reflect.DeepEqual(a, b)
}

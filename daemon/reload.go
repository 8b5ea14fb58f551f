package daemon

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/eracache"
	"github.com/mcpwatch/mcpwatch/internal/runner"
	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

// serverPlan is a configured server with its schedule read.
type serverPlan struct {
	cfg      config.Server
	sched    schedule
	interval time.Duration
	// The call schedules of a server with calls (callgroups.go); none
	// without. callInterval is its call_schedule's interval.
	calls        []callGroup
	callInterval time.Duration
}

// placement is where this daemon sits among its replicas: its name (which
// moves its probes' phases, see phased) and its shard of the fleet.
type placement struct {
	replica string
	shard   shard.Shard
}

// plan reads every schedule of cfg, so that a configuration the scheduler
// cannot run is refused as a whole, before anything is swapped, and keeps
// the servers of pl's shard: a sharded replica knows no other server.
// Every replica checks every server, so one configuration fails or loads
// on all shards alike.
func plan(cfg *config.Config, pl placement) ([]serverPlan, error) {
	plans := make([]serverPlan, 0, len(cfg.Servers))
	for _, srv := range cfg.Servers {
		sched, interval, err := parseSchedule(srv.Schedule)
		if err != nil {
			return nil, fmt.Errorf("%s: server %q: schedule: %w", configName(cfg), srv.Name, err)
		}
		if !pl.shard.Owns(srv.Name) {
			continue
		}
		if iv, ok := sched.(every); ok {
			sched = newPhased(srv.Name, time.Duration(iv), pl.replica)
		}
		p := serverPlan{cfg: srv, sched: sched, interval: interval}
		if srv.HasCalls() {
			groups, err := callGroups(srv, pl.replica)
			if err != nil {
				return nil, fmt.Errorf("%s: server %q: call_schedule: %w", configName(cfg), srv.Name, err)
			}
			p.calls, p.callInterval = groups, callInterval(groups, srv)
		}
		plans = append(plans, p)
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
		plans, err = plan(cfg, d.placement())
	}
	if err != nil {
		d.self.ReloadFailed()
		d.setReloadFailure(err)
		d.log.Error("configuration reload failed; the running configuration stays in force until the file is fixed",
			zap.String("config", path), zap.Error(err))
		return err
	}
	added, removed, changed := d.install(cfg, plans)
	d.startQueued() // a larger pool has room for queued probes now
	d.self.ReloadSucceeded(time.Now())
	d.setReloadFailure(nil)
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

// setReloadFailure records the outcome of a reload for the status page's
// banner: the error of a failed one (and since when reloads fail), nil for
// a good one.
func (d *Daemon) setReloadFailure(err error) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	if err == nil {
		d.reloadErr, d.reloadErrSince = "", time.Time{}
		return
	}
	if d.reloadErr == "" {
		d.reloadErrSince = time.Now()
	}
	d.reloadErr = err.Error()
}

// reloadFailure is the error of the last reload, if it failed, and since
// when reloads fail.
func (d *Daemon) reloadFailure() (string, time.Time) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	return d.reloadErr, d.reloadErrSince
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
	lock := d.lock.get(cfg.Lock)

	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	running := !d.started.IsZero()
	keep := make(map[string]bool, len(plans))
	for _, p := range plans {
		name := p.cfg.Name
		keep[name] = true
		s, ok := d.servers[name]
		if ok {
			s.restart() // a reload starts every command afresh: see server.warm
		}
		switch {
		case !ok:
			s = newServer(d.ctx, p.cfg, p.sched, p.interval, d.opts.History)
			s.gen = d.nextGen()
			s.setCalls(p, d.nextGen())
			s.relocks = &d.relocks
			s.relock(lock, p.cfg.Forbid) // the expected tools, known before the first probe
			d.servers[name] = s
			added = append(added, name)
			if running {
				d.table.add(slot{due: firstDue(p.sched, now, d.opts.AddedSpread), name: name, gen: s.gen})
				d.addCallSlots(s, now, d.opts.AddedSpread)
			}
		case !sameServer(s.cfg, p.cfg):
			changed = append(changed, name)
			rescheduled := s.cfg.Schedule != p.cfg.Schedule
			callsRescheduled := !sameGroups(s.callGroups, p.calls)
			s.setConfig(p.cfg, p.interval, reachChanged(s.cfg, p.cfg), eracache.SameTarget(s.cfg, p.cfg))
			s.cfg, s.sched, s.interval = p.cfg, p.sched, p.interval
			if rescheduled && running {
				s.gen = d.nextGen()
				d.table.add(slot{due: p.sched.Next(now), name: name, gen: s.gen})
			}
			if callsRescheduled {
				s.setCalls(p, d.nextGen()) // slots of the old call schedules are dropped
				if running {
					d.addCallSlots(s, now, d.opts.AddedSpread)
				}
			}
		}
	}
	removed = d.removeServers(keep)
	if len(added) > 0 {
		d.relocks.stale.Store(true) // compared with lock, which may be older than the latest
	}
	d.names = slices.Sorted(maps.Keys(d.servers))
	d.cfg = cfg
	d.issuers.SetInterval(cfg.Defaults.IssuerInterval)
	d.resizePool(cfg.Defaults)
	d.lives.setMax(cfg.Defaults.LiveSessions)
	return added, removed, changed
}

// removeServers drops every server not in keep, canceling its running
// probe, and returns their names, sorted. Called with d.mu held.
func (d *Daemon) removeServers(keep map[string]bool) []string {
	var removed []string
	for name, s := range d.servers {
		if keep[name] {
			continue
		}
		s.cancel()
		d.lives.drop(d, s)
		delete(d.servers, name)
		removed = append(removed, name)
		d.firstDone(name)
	}
	slices.Sort(removed)
	d.oauth.Retain(func(name string) bool { return keep[name] })
	return removed
}

// resizePool makes a new pool when the bounds changed; probes holding a
// slot of the old one give it back there. Called with d.mu held.
func (d *Daemon) resizePool(def config.Defaults) {
	all, stdio := def.Concurrency, def.StdioConcurrency // set by config.Normalize
	if d.pool != nil {
		if a, s := d.pool.Sizes(); a == all && s == min(stdio, all) {
			return
		}
	}
	d.pool = runner.NewPool(all, stdio)
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

// sameServer reports whether a server's configuration is unchanged by a
// reload: its exported fields are deeply equal. Unexported fields are left
// out: they are what a load derived from the exported ones (a contract's
// compiled JSON Schema, a new value at every load, so that reflect.DeepEqual
// called every server with a schema in its contracts changed on each reload
// of an unchanged file) or how the file wrote them.
func sameServer(a, b config.Server) bool {
	return equalExported(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalExported(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() && !equalExported(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalExported(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalExported(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !equalExported(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	}
	return a.Equal(b)
}

package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/daemon"
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/memlimit"
	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

const serveHelp = `Usage:
  mcpwatch serve [flags]

Runs the daemon: probes every server of the configuration on its schedule,
compares what it sees with the lock, and serves the results:

  /                  status page: one row per server, missing tools by name
  /server/NAME       one server and its last probes
  /metrics           Prometheus metrics
  /probe?server=N    probe one server now (&debug=true: a text transcript;
                     target=N too, as blackbox_exporter is asked); within the
                     scrape's X-Prometheus-Scrape-Timeout-Seconds less 0.5 s;
                     requests for one server share one probe, 429 past the bounds
  /api/v1/servers    the latest results as JSON (no secret values)
  /api/v1/servers/N  one server, with its last probes
  /-/healthy         liveness
  /-/ready           200 once the first round of probes has finished
  POST /-/reload     reload the configuration (as SIGHUP does), with
                     --web.enable-lifecycle

Every path is under --web.route-prefix (default: the path of
--web.external-url, else /); the pages' links are relative, so they work
behind a proxy.

--config.file names an mcpwatch.yml, or a client config (.mcp.json,
claude_desktop_config.json, .vscode/mcp.json) read as 'mcpwatch check'
reads one: its servers with the built-in defaults, the lock
./mcp-tools.lock.json (or $MCP_TOOL_LOCK). With none it reads
./mcpwatch.yml if there is one, else ./.mcp.json (or $MCP_CONFIG), as the
other commands do. The servers under ignore: in mcpwatch.yml are not
probed.

The configuration is re-read on SIGHUP (and POST /-/reload); a file that does
not load leaves the running one in force (mcpwatch_config_last_reload_successful
turns 0). The lock file is re-read whenever it changes. SIGTERM or SIGINT
stops the daemon within 5 s; it leaves no server process behind.

High availability and sharding (see deploy/kubernetes/README.md):

  --replica NAME     names this replica among those watching the same servers
                     (default: the host name, which is the pod name on
                     Kubernetes). Replicas named NAME-0 and NAME-1 (a
                     StatefulSet's pods) probe each server half an interval
                     apart, so a pair sees a change in half the time; other
                     names spread the phases by hash.
  --shard.total N    splits the servers into N shards; this replica probes
  --shard.index I    only shard I: the servers whose name hashes to I (md5 of
                     the name, as Prometheus's hashmod relabelling).
  --shard.from-pod-name POD
                     takes the index from a StatefulSet pod name's ordinal
                     (mcpwatch-2 is shard 2), as kube-state-metrics does.

Every flag can also be given by a variable: MCPWATCH_ and the flag's name
in capitals, "." and "-" written "_" (MCPWATCH_SHARD_INDEX,
MCPWATCH_WEB_LISTEN_ADDRESS=a:1,b:2); the command line wins over it.

Exit codes: 0 stopped by a signal; 1 could not serve (address in use);
2 usage error; 78 the configuration is unusable.

Flags:
%s`

// defaultListenAddress is on loopback: the status page shows server names,
// errors and stderr tails, and serving them wider is the operator's choice.
const defaultListenAddress = "127.0.0.1:9713"

// serveFlags are serve's settings, each from its flag, else its variable,
// else its default (see settings.go); the tags are the flags' names.
type serveFlags struct {
	ConfigFile      string        `koanf:"config.file"`
	Listen          []string      `koanf:"web.listen-address"`
	SystemdSocket   bool          `koanf:"web.systemd-socket"`
	WebConfig       string        `koanf:"web.config.file"`
	LogLevel        string        `koanf:"log.level"`
	LogFormat       string        `koanf:"log.format"`
	History         int           `koanf:"probe.history"`
	EnablePprof     bool          `koanf:"web.enable-pprof"`
	EnableLifecycle bool          `koanf:"web.enable-lifecycle"`
	RoutePrefix     string        `koanf:"web.route-prefix"`
	ExternalURL     string        `koanf:"web.external-url"`
	Era             string        `koanf:"era"`
	Timeout         time.Duration `koanf:"timeout"`
	MemoryLimit     string        `koanf:"memory.limit"`

	Replica    string   `koanf:"replica"`
	ShardIndex int      `koanf:"shard.index"`
	ShardTotal int      `koanf:"shard.total"`
	ShardPod   string   `koanf:"shard.from-pod-name"`
	PeerURLs   []string `koanf:"web.peer-urls"`

	PerServerHistograms bool `koanf:"metrics.per-server-histograms"`
}

// web is the exporter toolkit's view of the web flags.
func (f *serveFlags) web() *web.FlagConfig {
	return &web.FlagConfig{WebListenAddresses: &f.Listen, WebSystemdSocket: &f.SystemdSocket, WebConfigFile: &f.WebConfig}
}

func newServeFlagSet(f *serveFlags) *pflag.FlagSet {
	fs := newFlagSet("serve")
	fs.StringVarP(&f.ConfigFile, "config.file", "c", "", configFileUsage)
	fs.StringSliceVar(&f.Listen, "web.listen-address", []string{defaultListenAddress}, "`address`es to serve HTTP on (repeatable)")
	fs.StringVar(&f.WebConfig, "web.config.file", "", "exporter-toolkit web configuration `file` (TLS, basic auth)")
	fs.StringVar(&f.LogLevel, "log.level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.LogFormat, "log.format", logFormatNames()[0], "log format: "+orList(logFormatNames()))
	fs.IntVar(&f.History, "probe.history", 20, "probes kept per server for the status page (failed ones are kept besides)")
	fs.BoolVar(&f.EnablePprof, "web.enable-pprof", false, "serve Go profiles under /debug/pprof/")
	fs.DurationVar(&f.Timeout, "timeout", 0, "deadline of each probe, replacing every server's own (default: the server's timeout, 10s); a command that installs before it runs (npx, uvx, docker run) gets at least its start_timeout, 2m, until it has started")
	fs.StringVar(&f.Era, "era", "", "protocol era of every server: auto, modern or legacy, overriding the configuration's (default: each server's own)")
	fs.StringSliceVar(&f.PeerURLs, "web.peer-urls", nil, "status page `URL`s of the other replicas or shards, linked from this one (repeatable)")
	fs.StringVar(&f.Replica, "replica", "", "this replica's `name` among those watching the same servers; NAME-0 and NAME-1 probe half an interval apart (default: the host name)")
	fs.BoolVar(&f.PerServerHistograms, "metrics.per-server-histograms", false, "export mcp_client_operation_duration_seconds per server, tool and protocol version (about 3 kB of /metrics per server and kind of request) instead of one histogram for the fleet by method")
	fs.IntVar(&f.ShardTotal, "shard.total", 1, "split the servers into this many shards")
	fs.IntVar(&f.ShardIndex, "shard.index", 0, "probe only this shard, in [0, shard.total)")
	fs.StringVar(&f.ShardPod, "shard.from-pod-name", "", "take --shard.index from this StatefulSet `pod` name's ordinal (mcpwatch-2 is shard 2)")
	fs.BoolVar(&f.EnableLifecycle, "web.enable-lifecycle", false, "serve POST /-/reload (SIGHUP reloads either way)")
	fs.StringVar(&f.ExternalURL, "web.external-url", "", "the `URL` mcpwatch is reached at behind a proxy (e.g. https://example.org/mcpwatch/): its path is the default route prefix, its host passes the Host check on loopback")
	fs.StringVar(&f.RoutePrefix, "web.route-prefix", "", "`path` every endpoint is served under; default: the path of --web.external-url, else /")
	fs.BoolVar(&f.SystemdSocket, "web.systemd-socket", false, "serve on the sockets systemd passes (socket activation) instead of --web.listen-address")
	fs.StringVar(&f.MemoryLimit, "memory.limit", memlimit.Auto, "the Go runtime's soft memory `limit`: a size (400MiB, 1GiB, 400M; MB and GB are powers of 1000), off, or auto: GOMEMLIMIT when set, else 90% of the memory limit of the cgroup mcpwatch runs in (a container's, a systemd unit's MemoryMax), else none")
	withEnv(fs)
	return fs
}

func cmdServe(ctx context.Context, c *cli, args []string) int {
	var f serveFlags
	var log *zap.Logger
	var place placement
	var external *url.URL
	var memLimit memlimit.Setting
	var memErr error
	fs := newServeFlagSet(&f)
	if code, ok := parseArgs(c, fs, serveHelp, args, func() (err error) {
		given, err := layer(fs, c.lookupEnv, &f)
		if err != nil {
			return err
		}
		switch {
		case fs.NArg() > 0:
			return usagef("unexpected argument %q", fs.Arg(0))
		case f.History < 1:
			return usagef("--probe.history must be at least 1, got %d", f.History)
		case given("timeout") && f.Timeout <= 0:
			return usagef("--timeout must be positive, got %s", f.Timeout)
		case given("era"):
			if err := checkEra(f.Era); err != nil {
				return err
			}
		}
		if place, err = f.placement(given); err != nil {
			return err
		}
		if external, err = parseExternalURL(f.ExternalURL); err != nil {
			return err
		}
		goMemLimit, _ := c.lookupEnv("GOMEMLIMIT")
		if memLimit, memErr = memlimit.Choose(f.MemoryLimit, goMemLimit, "/", bytesize.Parse); memErr != nil && given("memory.limit") {
			return usagef("%v", memErr)
		}
		log, err = newLogger(c.stderr, f.LogLevel, f.LogFormat)
		return err
	}); !ok {
		return code
	}
	defer func() { _ = log.Sync() }()
	if memErr != nil {
		log.Warn("the cgroup's memory limit could not be read; no soft memory limit is set (--memory.limit sets one)", zap.Error(memErr))
	}
	memlimit.Apply(memLimit)
	log.Info("memory limit", zap.Int64("bytes", memLimit.Bytes), zap.String("from", memLimit.Source))

	// A reload reads the file the start read: an mcpwatch.yml, or a
	// client config whose servers are watched as they are.
	src, err := config.Discover(f.ConfigFile, ".", c.getenv)
	loader := imports.NewLoader() // keeps registry mirrors across reloads
	load := func(string) (*config.Config, error) {
		cfg, err := loader.LoadSource(src, c.getenv)
		applyServeEra(cfg, f.Era)
		return cfg, err
	}
	var cfg *config.Config
	if err == nil {
		cfg, err = load(src.Path)
	}
	if err != nil {
		fix := "Fix it and start again; 'mcpwatch serve --help' lists the flags, and --config.file names another file."
		switch {
		case errors.Is(err, config.ErrNoConfiguration):
			wd, _ := os.Getwd()
			fmt.Fprintf(c.stderr, "mcpwatch serve: cannot start: no mcpwatch.yml and no .mcp.json in %s.\n"+
				"Run it where one is, or name a configuration with --config.file.\n%s\n", wd, createConfigHint)
			return exitConfig
		case errors.Is(err, iofs.ErrNotExist):
			fix = "Create it, or name another with --config.file.\n" + createConfigHint
		}
		fmt.Fprintf(c.stderr, "mcpwatch serve: cannot start: the configuration %s is unusable:\n%v\n%s\n", src.Path, err, fix)
		return exitConfig
	}
	if f.WebConfig != "" {
		if err := web.Validate(f.WebConfig); err != nil {
			fmt.Fprintf(c.stderr, "mcpwatch serve: cannot start: the web configuration %s is unusable: %v\n"+
				"Fix it (see https://prometheus.io/docs/prometheus/latest/configuration/https/) or drop --web.config.file.\n", f.WebConfig, err)
			return exitConfig
		}
	}
	d, err := daemon.New(cfg, daemon.Options{
		Replica:         place.replica,
		Shard:           place.shard,
		PeerURLs:        f.PeerURLs,
		Logger:          log,
		Lookup:          c.lookupEnv,
		History:         f.History,
		ConfigFile:      src.Path,
		Load:            load,
		EnablePprof:     f.EnablePprof,
		EnableLifecycle: f.EnableLifecycle,
		RoutePrefix:     f.RoutePrefix,
		ExternalURL:     external,
		Version:         version.Version,
		Timeout:         f.Timeout,

		PerServerHistograms: f.PerServerHistograms,
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch serve: cannot start: %v\nFix the configuration and start again.\n", err)
		return exitConfig
	}

	listeners, err := listen(f.Listen, f.SystemdSocket)
	if err != nil {
		_ = d.Close(context.Background())
		fix := "Stop what uses the address or pass another --web.listen-address."
		if f.SystemdSocket {
			fix = "Start it from a systemd .socket unit, or drop --web.systemd-socket."
		}
		fmt.Fprintf(c.stderr, "mcpwatch serve: cannot serve HTTP: %v\n%s\n", err, fix)
		return exitFailed
	}

	stopHUP := reloadOnHUP(d)
	d.Start()
	scheme := "http"
	if usesTLS(f.WebConfig) {
		scheme = "https"
	}
	prefix := daemon.NormalizeRoutePrefix(f.RoutePrefix, external)
	for _, l := range listeners {
		base := strings.TrimSuffix(fmt.Sprintf("%s://%s%s", scheme, l.Addr(), prefix), "/")
		log.Info("mcpwatch is serving", zap.String("status_page", base+"/"), zap.String("metrics", base+"/metrics"))
	}
	if external != nil {
		log.Info("reached from outside at", zap.String("external_url", external.String()))
	}
	log.Info("watching", zap.String("version", version.Version), zap.String("config", src.Path),
		zap.String("lock", cfg.Lock), zap.Int("servers", len(d.Statuses())),
		zap.String("replica", place.replica), zap.Stringer("shard", place.shard))

	err = d.Serve(ctx, listeners, f.web())
	stopHUP()
	if err != nil {
		log.Error("mcpwatch stopped with an error", zap.Error(err))
		return exitFailed
	}
	log.Info("mcpwatch stopped")
	return exitOK
}

// createConfigHint is what to do when there is no configuration: it must
// make sense wherever mcpwatch runs, so it shows a configuration rather
// than a path.
const createConfigHint = `A small mcpwatch.yml:

  servers:
    report:
      command: ./reportserver
      env: {REPORT_API_TOKEN: "${file:/run/secrets/report-token}"}
    remote:
      url: https://mcp.example.com/mcp

then 'mcpwatch lock' to record the tools each server offers.`

// listen opens every address before anything starts, so an address in use
// fails the start with its own message instead of after the first probes.
// With systemd, the sockets are the ones systemd passed (LISTEN_FDS).
func listen(addrs []string, systemd bool) ([]net.Listener, error) {
	if systemd {
		listeners, err := activation.Listeners()
		if err == nil && len(listeners) == 0 {
			err = errors.New("--web.systemd-socket: systemd passed no socket (LISTEN_FDS is unset or 0)")
		}
		return listeners, err
	}
	var listeners []net.Listener
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, open := range listeners {
				_ = open.Close()
			}
			return nil, err
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// parseExternalURL reads --web.external-url: empty, or an absolute http or
// https URL.
func parseExternalURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--web.external-url %q: want an absolute http or https URL such as https://example.org/mcpwatch/", s)
	}
	return u, nil
}

// reloadOnHUP reloads the configuration on every SIGHUP until the returned
// func is called. Reload logs its own outcome.
func reloadOnHUP(d *daemon.Daemon) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-hup:
				_ = d.Reload()
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		wg.Wait()
	}
}

// placement is where a serve process sits among its replicas.
type placement struct {
	replica string
	shard   shard.Shard
}

// placement checks the replica and shard settings; given says which came
// from the command line or the environment.
func (f *serveFlags) placement(given func(string) bool) (placement, error) {
	for _, u := range f.PeerURLs {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return placement{}, usagef("--web.peer-urls %q: want an http:// or https:// URL of another replica's status page", u)
		}
	}
	var p placement
	switch {
	case f.ShardTotal < 1:
		return p, usagef("--shard.total must be at least 1, got %d", f.ShardTotal)
	case f.ShardPod != "" && given("shard.index"):
		return p, usagef("--shard.index and --shard.from-pod-name both give the shard; keep one")
	case f.ShardPod != "":
		s, err := shard.FromPodName(f.ShardPod, f.ShardTotal)
		if err != nil {
			return p, usagef("--shard.from-pod-name: %v", err)
		}
		p.shard = s
	default:
		p.shard = shard.Shard{Index: f.ShardIndex, Total: f.ShardTotal}
		if err := p.shard.Validate(); err != nil {
			return p, usagef("--shard.index %d with --shard.total %d: %v", f.ShardIndex, f.ShardTotal, err)
		}
	}
	p.replica = f.Replica
	if p.replica == "" {
		p.replica = f.ShardPod
	}
	if p.replica == "" {
		p.replica, _ = os.Hostname() // none: phases of the server names alone
	}
	return p, nil
}

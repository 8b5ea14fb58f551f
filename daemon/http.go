package daemon

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/exporter-toolkit/web"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/mcpwatch/mcpwatch/metrics"
)

// Handler serves every endpoint of the daemon under Options.RoutePrefix:
//
//	/                      status page, problems first
//	/server/NAME           one server and its last probes
//	/metrics               Prometheus metrics: every server's, then mcpwatch's own
//	/probe?server=NAME     probe now, answer with that probe's metrics (&debug=true: a text transcript;
//	                       target=NAME too; within the scrape's timeout, see probeTimeout)
//	/api/v1/servers        the latest results as JSON, redacted
//	/api/v1/servers/NAME   one server, with its last probes
//	/-/healthy, /-/ready   liveness, and readiness after the first round
//	POST /-/reload         reload the configuration file, with Options.EnableLifecycle
//	/debug/pprof/          profiles, with Options.EnablePprof
//
// Every request passes the Host check (see hostAllowed) first; POST
// /-/reload and /probe refuse a request a browser marks as cross-site.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.handleIndex)
	mux.HandleFunc("GET /favicon.svg", handleFavicon)
	mux.HandleFunc("GET /server/{name}", d.handleServerPage)
	// The servers' series are written straight from their statuses, then
	// the registry of mcpwatch's own metrics; an error of that registry is
	// logged and the rest still served.
	var opts []metrics.HandlerOption
	if d.opts.PerServerHistograms {
		opts = append(opts, metrics.PerServerOperations())
	}
	mux.Handle("GET /metrics", metrics.NewHandler(d, d.reg, stdLogFor(d.log.Named("metrics")), opts...))
	mux.Handle("GET /probe", sameSiteOnly(http.HandlerFunc(d.handleProbe)))
	mux.HandleFunc("GET /api/v1/servers", d.handleAPIServers)
	mux.HandleFunc("GET /api/v1/servers/{name}", d.handleAPIServer)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "mcpwatch is healthy.\n")
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if d.Ready() {
			writeText(w, http.StatusOK, "mcpwatch is ready.\n")
			return
		}
		writeText(w, http.StatusServiceUnavailable, "mcpwatch is not ready: the first round of probes is still running.\n")
	})
	// Lifecycle endpoints are off unless asked for, as in Prometheus: an
	// HTTP client that can reach the port should not be able to make the
	// daemon reread its files. SIGHUP always reloads.
	if d.opts.EnableLifecycle {
		mux.Handle("POST /-/reload", crossOriginGuard().Handler(http.HandlerFunc(d.handleReload)))
	} else {
		mux.HandleFunc("POST /-/reload", func(w http.ResponseWriter, _ *http.Request) {
			writeText(w, http.StatusForbidden, "Lifecycle API is not enabled: start mcpwatch serve with --web.enable-lifecycle, or send SIGHUP.\n")
		})
	}
	if d.opts.EnablePprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return d.hostCheck(withPrefix(d.opts.RoutePrefix, mux))
}

func (d *Daemon) handleReload(w http.ResponseWriter, _ *http.Request) {
	if err := d.Reload(); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, ErrClosed) {
			status = http.StatusServiceUnavailable
		}
		writeText(w, status, fmt.Sprintf("reload failed, the running configuration stays in force: %v\n", err))
		return
	}
	writeText(w, http.StatusOK, "configuration reloaded.\n")
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text)) //nolint:gosec // G705: text/plain with nosniff is never rendered as HTML
}

// Serve serves Handler on the listeners through the exporter toolkit (TLS
// and basic auth from the web flags' --web.config.file, if set; nil flags
// for none) and runs until ctx is done or
// serving fails. Then it shuts everything down: HTTP, the schedules, the
// running probes, within Options.ShutdownTimeout. Start must have been
// called for probes to run; Serve closes the Daemon before it returns.
func (d *Daemon) Serve(ctx context.Context, listeners []net.Listener, flags *web.FlagConfig) error {
	if flags == nil {
		flags = &web.FlagConfig{WebConfigFile: new(string)}
	}
	srv := d.newHTTPServer()
	srv.ErrorLog = stdLogFor(d.log.Named("http"))
	// Requests end with the daemon: an on-demand probe is canceled at
	// shutdown like a scheduled one.
	srv.BaseContext = func(net.Listener) context.Context { return d.ctx }

	if !d.enter() {
		return ErrClosed
	}
	errc := make(chan error, 1)
	go func() {
		defer d.wg.Done()
		errc <- web.ServeMultiple(listeners, srv, flags, slogFor(d.log.Named("web")))
	}()

	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("serve HTTP: %w", err)
		}
	}

	// Refuse new work and cancel what runs, so HTTP shutdown does not wait
	// out a /probe; then stop HTTP; then wait for the rest.
	d.stop()
	sctx, cancel := context.WithTimeout(context.Background(), d.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	return errors.Join(serveErr, d.Close(sctx))
}

// slogFor bridges zap to log/slog, the one adapter between the daemon's
// logger and what the libraries it serves with want: the exporter toolkit
// logs through slog, and the HTTP server and the metrics handler through
// the standard library's *log.Logger, which slog makes (stdLogFor). Its
// lines go through the daemon's own core with the same fields as zap's,
// caller included (the slog record's: the line of the library that
// logged), so one stream has one format.
func slogFor(l *zap.Logger) *slog.Logger {
	return slog.New(zapslog.NewHandler(l.Core(), zapslog.WithName(l.Name()), zapslog.WithCaller(true)))
}

// stdLogFor is a *log.Logger writing to l at info level, as zap's own
// NewStdLog did.
func stdLogFor(l *zap.Logger) *log.Logger {
	return slog.NewLogLogger(slogFor(l).Handler(), slog.LevelInfo)
}

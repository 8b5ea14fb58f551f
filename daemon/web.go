package daemon

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The HTTP server's bounds. A slow or idle client must not hold a
// connection (and its goroutine) forever: a request's headers arrive within
// ReadHeaderTimeout, the whole request (mcpwatch reads no bodies) within
// readTimeout, and a keep-alive connection with no request for
// IdleTimeout is closed. The idle bound is above Prometheus' usual scrape
// intervals (up to a minute), so a scraper keeps reusing its connection.
// There is no write timeout: /probe answers when its probe ends, which the
// server's own timeout bounds, and a client that goes away cancels it.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	readTimeout              = 30 * time.Second
	defaultIdleTimeout       = 2 * time.Minute
	maxHeaderBytes           = 64 << 10
)

// newHTTPServer is the server Serve runs Handler on.
func (d *Daemon) newHTTPServer() *http.Server {
	return &http.Server{
		Handler:           d.Handler(),
		ReadHeaderTimeout: d.opts.ReadHeaderTimeout,
		ReadTimeout:       max(readTimeout, d.opts.ReadHeaderTimeout),
		IdleTimeout:       d.opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// crossOriginGuard refuses a state-changing request that a browser marks
// as coming from another site (Sec-Fetch-Site, or an Origin that is not the
// Host): a web page must not be able to make the daemon reload. Clients
// that are not browsers (curl, a deploy script) send neither header and
// pass.
func crossOriginGuard() *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	c.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusForbidden, "cross-origin request refused: lifecycle endpoints take requests from the same origin or from non-browser clients only.\n")
	}))
	return c
}

// sameSiteOnly refuses a GET from another site's page (see crossSite):
// /probe starts work, and an <img> on any page must not start it.
// Prometheus, curl and the status page's own links pass.
func sameSiteOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crossSite(r) {
			writeText(w, http.StatusForbidden, "cross-site request refused: /probe is for Prometheus, scripts and this daemon's own pages.\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossSite reports whether a browser sent r for a page of another
// origin: its Sec-Fetch-Site says so (anything but same-origin, or none
// for an address typed in), or, from a browser too old to send
// Sec-Fetch-Site, its Origin names another host (or is the opaque "null"
// of a sandboxed frame or a file). Clients that are not browsers send
// neither header and pass.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// hostCheck refuses requests whose Host header hostAllowed refuses.
func (d *Daemon) hostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.hostAllowed(r) {
			writeText(w, http.StatusMisdirectedRequest, "request refused: a daemon listening on loopback answers only to an IP address, localhost, "+
				"or the host of --web.external-url in the Host header (a guard against DNS rebinding). "+
				"Browse to it by address, or start it with --web.external-url naming the host you use.\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed is the guard against DNS rebinding: a page on
// evil.example whose name is made to resolve to 127.0.0.1 reaches a
// daemon on loopback with "Host: evil.example", and could read the API
// and the page from the browser of someone on the machine. A request that
// arrived on a loopback address must therefore name an IP address,
// localhost (or a name under .localhost) or the host of
// Options.ExternalURL. On any other address the daemon is reachable by
// the network anyway, under whatever names the operator gave it (a
// Kubernetes Service, a load balancer), so Host is not checked there:
// TLS and basic auth (--web.config.file) guard that case.
func (d *Daemon) hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !isLoopback(local) {
		return true
	}
	host := hostOnly(r.Host)
	if host == "" || net.ParseIP(host) != nil {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if u := d.opts.ExternalURL; u != nil && strings.EqualFold(host, u.Hostname()) {
		return true
	}
	return false
}

// hostOnly is the host of a Host header, without port or IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func isLoopback(a net.Addr) bool {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	host := hostOnly(a.String())
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withPrefix serves h under prefix ("/mcpwatch": /mcpwatch/, /mcpwatch/metrics
// and so on), with / and the bare prefix redirected to prefix + "/".
// Every link the pages hold is relative, so they work under any prefix and
// behind a proxy that maps another path onto it.
func withPrefix(prefix string, h http.Handler) http.Handler {
	if prefix == "" || prefix == "/" {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	redirect := http.RedirectHandler(prefix+"/", http.StatusFound)
	mux.Handle("GET "+prefix, redirect)
	mux.Handle("GET /{$}", redirect)
	return mux
}

// NormalizeRoutePrefix returns the route prefix to serve under: the given
// one, else the path of externalURL, else "/"; always starting with a slash
// and never ending in one (except "/" itself).
func NormalizeRoutePrefix(prefix string, externalURL *url.URL) string {
	if prefix == "" && externalURL != nil {
		prefix = externalURL.Path
	}
	prefix = "/" + strings.Trim(prefix, "/")
	return prefix
}

// faviconSVG is the page's icon: a small radar ring, in the colour of OK.
const faviconSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
	`<circle cx="8" cy="8" r="6.5" fill="none" stroke="#2b7a4b" stroke-width="2"/>` +
	`<circle cx="8" cy="8" r="2.5" fill="#2b7a4b"/></svg>`

func handleFavicon(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "max-age=86400")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte(faviconSVG))
}

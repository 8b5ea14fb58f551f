package main

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpAuth decides what an HTTP request may see from its bearer token,
// compared with the server's REPORT_API_TOKEN:
//   - no Authorization header, or an empty bearer: zero tools, no error (the
//     silent failure mcpwatch exists for);
//   - a server started without REPORT_API_TOKEN: zero tools for everyone;
//   - a wrong non-empty token: 401 with a Bearer challenge;
//   - the right token: the tools REPORT_SCOPE allows.
type httpAuth struct {
	token string // REPORT_API_TOKEN
	scope string // REPORT_SCOPE
}

// access returns what the request may see; ok is false for a wrong token.
func (a httpAuth) access(r *http.Request) (_ access, ok bool) {
	scheme, presented, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented = strings.TrimSpace(presented)
	if !strings.EqualFold(scheme, "Bearer") || presented == "" || a.token == "" {
		return accessNone, true
	}
	if subtle.ConstantTimeCompare([]byte(presented), []byte(a.token)) != 1 {
		return accessNone, false
	}
	return scopeAccess(a.scope), true
}

// newHTTPHandler serves streamable HTTP. The mcp.Server is built per
// request (per session in the legacy era), from that request's token.
func newHTTPHandler(e era, auth httpAuth, up upstream) http.Handler {
	getServer := func(r *http.Request) *mcp.Server {
		a, _ := auth.access(r)
		return newReportServer(e, a, up)
	}
	var h http.Handler
	switch e {
	case eraModern:
		h = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
	case eraLegacy:
		h = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{SessionTimeout: 10 * time.Minute})
	default:
		// go-sdk serves 2026-07-28 only statelessly, and legacy sessions only
		// statefully: route each request by the version header it carries.
		h = eraRouter{
			modern: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}),
			legacy: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{SessionTimeout: 10 * time.Minute}),
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := auth.access(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="report-server", error="invalid_token", error_description="the bearer token is not valid"`)
			http.Error(w, "Unauthorized: the bearer token is not valid", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// eraRouter sends modern requests (MCP-Protocol-Version 2026-07-28 or later)
// to the stateless handler and the rest to the session-keeping one.
type eraRouter struct{ modern, legacy http.Handler }

func (e eraRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("MCP-Protocol-Version") >= versionModern {
		e.modern.ServeHTTP(w, r)
		return
	}
	e.legacy.ServeHTTP(w, r)
}

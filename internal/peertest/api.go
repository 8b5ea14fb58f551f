package peertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// API is a stand-in of one upstream HTTP API, on loopback. It knows which
// credentials are good and which were revoked; any other is wrong.
type API struct {
	// Name is the service it stands in for ("GitHub").
	Name string
	// Origin is the real API's origin, which the preload sends here.
	Origin string

	srv *httptest.Server
	// writes tells a request that would have written; by default any
	// method but GET and HEAD (Slack's Web API takes reads as POST too).
	writes func(*http.Request) bool

	mu      sync.Mutex
	valid   map[string]bool
	revoked map[string]bool
	expires map[string]time.Time
	// identity answers the service's identity request as its entry in the
	// catalogue of credential issuers says (AnswersIdentity), before serve sees it.
	identity   func(a *API, w http.ResponseWriter, r *http.Request, v verdict) bool
	down       bool
	requests   int
	identities int
	written    int
	seen       []string
}

// verdict is what a stand-in makes of the credential of a request.
type verdict int

const (
	credNone    verdict = iota // the request carried none
	credValid                  // one the API accepts
	credRevoked                // one it accepted once
	credWrong                  // one it never issued
)

// newAPI starts a stand-in; serve answers a request given what its
// credential is.
func newAPI(name, origin string, credential func(*http.Request) string, serve func(w http.ResponseWriter, r *http.Request, v verdict), valid []string) *API {
	return newAPIOf(name, origin, credential, func(_ *API, w http.ResponseWriter, r *http.Request, v verdict) { serve(w, r, v) }, valid)
}

// newAPIOf is newAPI for a serve that reads the stand-in's own state.
func newAPIOf(name, origin string, credential func(*http.Request) string, serve func(a *API, w http.ResponseWriter, r *http.Request, v verdict), valid []string) *API {
	a := &API{Name: name, Origin: origin, valid: map[string]bool{}, revoked: map[string]bool{}, expires: map[string]time.Time{}, writes: func(r *http.Request) bool {
		return r.Method != http.MethodGet && r.Method != http.MethodHead
	}}
	for _, t := range valid {
		a.valid[t] = true
	}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := credential(r)
		a.mu.Lock()
		write := a.writes(r)
		a.requests++
		a.seen = append(a.seen, r.Method+" "+r.URL.Path)
		if write {
			a.written++
		}
		v := credWrong
		switch {
		case cred == "":
			v = credNone
		case a.valid[cred]:
			v = credValid
		case a.revoked[cred]:
			v = credRevoked
		}
		identity := a.identity
		a.mu.Unlock()
		if identity != nil && identity(a, w, r, v) {
			return
		}
		serve(a, w, r, v)
	}))
	return a
}

// AnswersIdentity makes the stand-in answer the identity request of the
// issuer catalogue's service id (internal/issuer) as the service's
// documentation shows, besides what it serves: mcpwatch's check of a
// credential at its issuer reaches the same stand-in as the server given
// it. It panics when the catalogue or its documented answers lack the
// service: a test's fixture that must exist.
func (a *API) AnswersIdentity(id string) *API {
	_, answer, err := identity(id)
	if err != nil {
		panic(err)
	}
	a.mu.Lock()
	a.identity = answer
	a.mu.Unlock()
	return a
}

// URL is where the stand-in listens.
func (a *API) URL() string { return a.srv.URL }

// Close stops it.
func (a *API) Close() { a.srv.Close() }

// Accept makes token a good credential (again).
func (a *API) Accept(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.revoked, token)
	delete(a.expires, token)
	a.valid[token] = true
}

// Revoke makes token a revoked credential, as when its owner revokes it.
func (a *API) Revoke(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.valid, token)
	a.revoked[token] = true
}

// Requests counts the requests it answered.
func (a *API) Requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// Seen lists the requests it answered, as "METHOD /path" (no query: a
// credential may ride in one), in order.
func (a *API) Seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// IdentityRequests counts the requests it answered at the identity
// endpoint of its service (AnswersIdentity, NewIssuer): those of a check
// at the issuer.
func (a *API) IdentityRequests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.identities
}

// Writes counts the requests that would have written (any method but GET
// and HEAD): a monitor's canary calls must make none.
func (a *API) Writes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.written
}

// Down makes the service unreachable, or reachable again: the servers
// given NodeEnv (or a proxy's settings) after Down(true) find their origin
// refusing connections, as when the service is down or the network is
// cut. The stand-in itself keeps listening, for a later Down(false).
func (a *API) Down(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

// reachAt is where a server must connect to reach the service: the
// stand-in, or a port that refuses every connection while it is down.
func (a *API) reachAt() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		return RefusedURL()
	}
	return a.URL()
}

// NodeEnv is what a pinned server needs in its environment to reach apis
// instead of the real services: the preload, and where each origin goes
// (nowhere that answers for an API that is Down). Any other origin is
// refused.
func NodeEnv(apis ...*API) map[string]string {
	to := map[string]string{}
	for _, a := range apis {
		to[a.Origin] = a.reachAt()
	}
	raw, err := json.Marshal(to)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return map[string]string{
		"NODE_OPTIONS":       "--require=" + filepath.Join(dir(), upstreamsPreload),
		"MCPWATCH_UPSTREAMS": string(raw),
	}
}

// writeJSON answers with status and v as JSON, as the APIs do.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// peekJSON decodes r's JSON body into v and puts the body back for the
// stand-in's handler: false when there is none or it is no JSON.
func peekJSON(r *http.Request, v any) bool {
	if r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	return err == nil && json.Unmarshal(body, v) == nil
}

// bearer is the token of an "Authorization: Bearer TOKEN" header.
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

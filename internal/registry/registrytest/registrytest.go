// Package registrytest is a fake MCP Registry for tests: an httptest server
// with the official registry's list API (GET /v0.1/servers and
// /v0/servers: cursor, limit, updated_since, version=latest,
// include_deleted; {"servers": [{"server": ..., "_meta": ...}],
// "metadata": {"nextCursor", "count"}}), whose entries a test changes
// between syncs.
package registrytest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Server is the fake registry.
type Server struct {
	*httptest.Server
	// MaxPage caps a page whatever limit is asked (the official registry
	// caps at 100). Default 100.
	MaxPage int

	mu       sync.Mutex
	entries  []stored
	requests []url.Values
}

type stored struct {
	server  map[string]any
	status  string
	updated time.Time
}

// New starts a fake registry; it is closed with the test.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{MaxPage: 100}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Put adds a server.json (or replaces the one of the same name), updated
// at the given time.
func (s *Server) Put(server map[string]any, updated time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.entries {
		if e.server["name"] == server["name"] {
			s.entries[i] = stored{server: server, status: "active", updated: updated}
			return
		}
	}
	s.entries = append(s.entries, stored{server: server, status: "active", updated: updated})
}

// Delete marks the named server deleted at the given time, as the
// registry does: it stays, with status deleted, for incremental syncs.
func (s *Server) Delete(name string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.entries {
		if e.server["name"] == name {
			s.entries[i].status, s.entries[i].updated = "deleted", at
		}
	}
}

// Requests are the query strings of the list requests served so far.
func (s *Server) Requests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v0.1/servers" && r.URL.Path != "/v0/servers" {
		http.Error(w, `{"error": "not found"}`, http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, q)

	limit := s.MaxPage
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 && n < limit {
		limit = n
	}
	var since time.Time
	if v := q.Get("updated_since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			http.Error(w, `{"error": "bad updated_since"}`, http.StatusBadRequest)
			return
		}
		since = t
	}
	// Deleted entries are listed with updated_since (always) or
	// include_deleted, as the official registry does.
	withDeleted := !since.IsZero() || q.Get("include_deleted") == "true"
	var match []stored
	for _, e := range s.entries {
		if !since.IsZero() && !e.updated.After(since) || e.status == "deleted" && !withDeleted {
			continue
		}
		match = append(match, e)
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			http.Error(w, `{"error": "bad cursor"}`, http.StatusBadRequest)
			return
		}
		start, _ = strconv.Atoi(string(b))
	}
	end := min(start+limit, len(match))
	page := map[string]any{}
	items := []any{}
	for _, e := range match[min(start, end):end] {
		items = append(items, map[string]any{
			"server": e.server,
			"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
				"status": e.status, "publishedAt": e.updated.Format(time.RFC3339Nano),
				"updatedAt": e.updated.Format(time.RFC3339Nano), "isLatest": true,
			}},
		})
	}
	meta := map[string]any{"count": len(items)}
	if end < len(match) {
		meta["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	page["servers"], page["metadata"] = items, meta
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

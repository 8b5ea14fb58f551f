package probetest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a test MCP server over HTTP: it serves streamable HTTP itself
// (ServeHTTP, on any path) and the legacy HTTP+SSE transport through SSE.
// It counts what clients send, so a test can assert what a prober did.
type Server struct {
	core      *core
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	received map[string]int
	sessions map[string]*session        // legacy streamable HTTP sessions, by Mcp-Session-Id
	streams  map[string]*sseStream      // legacy HTTP+SSE streams, by sessionId
	waiting  map[string]chan *inMessage // our own requests to clients, by id
	nextID   int
	dropped  map[string]time.Time // DropStream: when the first stream of each method dropped
	replays  map[string]replay    // DropStream: replies kept for a resuming GET, by Last-Event-ID
	resumes  []Resume
}

// NewServer returns a test server for cfg. It panics on an invalid Config.
func NewServer(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Server{
		core:     newCore(cfg),
		closed:   make(chan struct{}),
		received: map[string]int{},
		sessions: map[string]*session{},
		streams:  map[string]*sseStream{},
		waiting:  map[string]chan *inMessage{},
		dropped:  map[string]time.Time{},
		replays:  map[string]replay{},
	}
}

// Handler returns a streamable HTTP test server for cfg, on any path: POST
// carries messages; GET opens a standalone SSE stream in a legacy session
// (405 in the modern era); DELETE ends a legacy session (405 in the modern
// era).
func Handler(cfg Config) http.Handler { return NewServer(cfg) }

// SSEHandler returns a legacy HTTP+SSE (2024-11-05) test server for cfg: a
// GET on any path opens a stream whose first event, "endpoint", carries a
// relative URI (the path's last segment with "?sessionId=..."); POSTs there
// get 202 and their replies arrive on the stream as "message" events.
func SSEHandler(cfg Config) http.Handler { return NewServer(cfg).SSE() }

// Received returns how many messages with this method (a request or a
// notification, e.g. "initialize") clients have sent, whether or not they
// were answered.
func (s *Server) Received(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received[method]
}

// Sessions returns how many legacy streamable HTTP sessions are open: one
// per initialize, until a DELETE ends it.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Close releases every request the server holds open (stalls, streams,
// Unresponsive): call it before httptest.Server.Close when a client may
// still be waiting. Requests also end when their client disconnects.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	msg, perr, ok := s.readPOST(w, r)
	if !ok || s.gate(w, r, msg) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.servePOST(w, r, msg, perr)
	case http.MethodGet:
		s.serveGET(w, r)
	case http.MethodDelete:
		s.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// readPOST reads and counts the message of a POST before anything else, so
// Received tells what a client sent even when the answer is a 401. ok is
// false when a response has been written.
func (s *Server) readPOST(w http.ResponseWriter, r *http.Request) (msg *inMessage, perr *rpcError, ok bool) {
	if r.Method != http.MethodPost {
		return nil, nil, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInLine))
	if err != nil {
		http.Error(w, fmt.Sprintf("probetest: read request body: %v", err), http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	msg, perr = parseMessage(body)
	if msg != nil && msg.Method != "" {
		s.mu.Lock()
		s.received[msg.Method]++
		s.mu.Unlock()
	}
	return msg, perr, true
}

// gate answers for the behaviors that decide before any MCP: auth failures
// (of every request, or of tools/call alone), a 500, a hang, a dropped
// connection. It reports whether it answered.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, msg *inMessage) bool {
	cfg := s.core.cfg
	switch cfg.Behavior {
	case CallUnauthorized401:
		if msg == nil || msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="the token was revoked"`)
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"error": "invalid_token", "error_description": "the token was revoked"})
	case Unauthorized401:
		metadataURL := origin(r) + "/.well-known/oauth-protected-resource"
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			writeJSON(w, http.StatusOK, map[string]any{
				"resource":              origin(r),
				"authorization_servers": []string{origin(r) + "/"},
				"scopes_supported":      []string{"reports:read"},
			})
			return true
		}
		if cfg.Token != "" && bearer(r) == cfg.Token {
			return false
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="reports:read"`, metadataURL))
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"error": "invalid_token", "error_description": "a valid bearer token is required"})
	case InsufficientScope403:
		w.Header().Set("WWW-Authenticate",
			`Bearer error="insufficient_scope", scope="reports:write", error_description="the token lacks the reports:write scope"`)
		writeJSON(w, http.StatusForbidden, map[string]any{
			"error": "insufficient_scope", "error_description": "the token lacks the reports:write scope"})
	case ServerError500:
		http.Error(w, "probetest: internal server error (ServerError500 behavior)", http.StatusInternalServerError)
	case Unresponsive:
		s.hang(r.Context())
	case ExitAtOnce:
		// The nearest thing to a crashed server: the connection drops
		// without a status line.
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		} else {
			panic(http.ErrAbortHandler)
		}
	default:
		return false
	}
	return true
}

// creds reads what an HTTP client proves: its bearer token. Scoped: a
// request without the full-scope token has read scope only.
func (s *Server) creds(r *http.Request) creds {
	ok := tokenMatches(s.core.cfg.Token, bearer(r))
	return creds{token: ok, readOnly: !ok}
}

func bearer(r *http.Request) string {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// hang holds a request open until its client leaves or the server closes.
func (s *Server) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.closed:
	}
}

// await registers one of our own requests to a client and returns its id
// and where its reply will arrive.
func (s *Server) await(method string) (string, chan *inMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := fmt.Sprintf("probetest-%s-%d", method, s.nextID)
	ch := make(chan *inMessage, 1)
	s.waiting[id] = ch
	return id, ch
}

func (s *Server) forget(id string) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

// deliver hands a client's reply to whoever awaits it; other replies are
// dropped.
func (s *Server) deliver(m *inMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, ch := range s.waiting {
		if idEquals(m.ID, id) {
			delete(s.waiting, id)
			ch <- m // buffered: never blocks
			return
		}
	}
}

func newSessionID() string { return rand.Text() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("probetest: encode response: %v", err)) // built here from plain values
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

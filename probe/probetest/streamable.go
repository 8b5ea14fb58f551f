package probetest

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// servePOST answers one streamable HTTP POST.
func (s *Server) servePOST(w http.ResponseWriter, r *http.Request, msg *inMessage, perr *rpcError) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Unsupported Media Type: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		writeJSON(w, http.StatusNotAcceptable, errorMessage(nil, &rpcError{
			Code: codeNoSession, Message: "Not Acceptable: Client must accept both application/json and text/event-stream"}))
		return
	}
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, perr))
		return
	}
	if msg.isResponse() {
		s.deliver(msg)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if s.core.modern(msg, r.Header.Get("MCP-Protocol-Version")) {
		s.serveModernPOST(w, r, msg)
	} else {
		s.serveLegacyPOST(w, r, msg)
	}
}

// serveModernPOST answers a stateless 2026-07-28 request: any session id is
// ignored and every request stands alone.
func (s *Server) serveModernPOST(w http.ResponseWriter, r *http.Request, msg *inMessage) {
	if v := msg.metaVersion(); v != "" {
		if problem := modernHeaderProblem(r, msg, v); problem != "" {
			writeJSON(w, http.StatusBadRequest, errorMessage(msg.ID, &rpcError{Code: codeHeaderMismatch, Message: problem}))
			return
		}
	}
	if msg.isNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.answer(w, r, &session{}, msg, true)
}

// modernHeaderProblem checks the headers a modern request must carry to
// match its body; "" means they do.
func modernHeaderProblem(r *http.Request, msg *inMessage, version string) string {
	if got := r.Header.Get("MCP-Protocol-Version"); got != version {
		return fmt.Sprintf("MCP-Protocol-Version header %q does not match _meta protocolVersion %q", sanitize.Truncate(got, 40), sanitize.Truncate(version, 40))
	}
	if got := decodeHeaderValue(r.Header.Get("Mcp-Method")); got != msg.Method {
		return fmt.Sprintf("Mcp-Method header %q does not match method %q", sanitize.Truncate(got, 60), sanitize.Truncate(msg.Method, 60))
	}
	if msg.Method == "tools/call" {
		name, _ := msg.params()["name"].(string)
		if got := decodeHeaderValue(r.Header.Get("Mcp-Name")); got != name {
			return fmt.Sprintf("Mcp-Name header %q does not match params.name %q", sanitize.Truncate(got, 60), sanitize.Truncate(name, 60))
		}
	}
	return ""
}

// decodeHeaderValue undoes the =?base64?...?= form of non-header-safe values.
func decodeHeaderValue(v string) string {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return v
	}
	return string(b)
}

// serveLegacyPOST answers in an initialize-era session, with the
// TypeScript SDK's answers to a missing or unknown session.
func (s *Server) serveLegacyPOST(w http.ResponseWriter, r *http.Request, msg *inMessage) {
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(LegacyVersions(), v) {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &rpcError{
			Code: codeNoSession, Message: "Bad Request: Unsupported protocol version: " + sanitize.Truncate(v, 40)}))
		return
	}
	var sess *session
	if msg.isRequest() && msg.Method == "initialize" {
		id := newSessionID()
		sess = &session{}
		s.mu.Lock()
		s.sessions[id] = sess
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
	} else if sess = s.legacySession(w, r); sess == nil {
		return
	}
	if msg.isNotification() {
		s.core.notification(r.Context(), sess, msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.answer(w, r, sess, msg, false)
}

// legacySession finds the session a request names, or answers 400 (none)
// or 404 (unknown) and returns nil.
func (s *Server) legacySession(w http.ResponseWriter, r *http.Request) *session {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &rpcError{
			Code: codeNoSession, Message: "Bad Request: No valid session ID provided"}))
		return nil
	}
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil {
		writeJSON(w, http.StatusNotFound, errorMessage(nil, &rpcError{Code: codeSessionNotFound, Message: "Session not found"}))
	}
	return sess
}

// answer runs one request through core and writes the reply as JSON, or as
// an SSE stream when asked for or when core had more to send first.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, sess *session, msg *inMessage, modern bool) {
	p := s.newPeer(w, r, true)
	rep := s.core.handle(r.Context(), sess, msg, s.creds(r), modern, p)
	if rep.msg == nil {
		s.hang(r.Context())
		return
	}
	if s.core.cfg.Behavior == DropStream && rep.httpStatus() == http.StatusOK {
		s.dropStream(r, p, rep, msg.Method, modern)
		return
	}
	if p.streaming || (s.core.cfg.SSEResponses && rep.httpStatus() == http.StatusOK) {
		if p.startStream() == nil {
			_ = p.event("message", rep)
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.httpStatus())
	p.flush()
	_ = p.copy(rep)
}

// serveGET opens the standalone SSE stream of a legacy session; it carries
// nothing but its priming event.
func (s *Server) serveGET(w http.ResponseWriter, r *http.Request) {
	if s.core.cfg.Era == EraModern {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if !accepts(r, "text/event-stream") {
		http.Error(w, "Not Acceptable: Client must accept text/event-stream", http.StatusNotAcceptable)
		return
	}
	if s.legacySession(w, r) == nil {
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" && s.core.cfg.Behavior == DropStream {
		s.resumeStream(w, r, last)
		return
	}
	p := s.newPeer(w, r, true)
	if p.startStream() == nil {
		s.hang(r.Context())
	}
}

// serveDELETE ends a legacy session.
func (s *Server) serveDELETE(w http.ResponseWriter, r *http.Request) {
	if s.core.cfg.Era == EraModern {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if s.legacySession(w, r) == nil {
		return
	}
	s.mu.Lock()
	delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// accepts reports whether the Accept header admits the media type.
func accepts(r *http.Request, mediaType string) bool {
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case mediaType, major + "/*", "*/*":
				return true
			}
		}
	}
	return false
}

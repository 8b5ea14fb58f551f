package probetest

import (
	"net/http"
	"path"
	"strings"
)

// sseStream is one legacy HTTP+SSE connection: the GET that carries every
// server message, fed by the POSTs sent to its endpoint.
type sseStream struct {
	sess  session
	creds creds
	inbox chan *inMessage
}

// SSE returns the legacy HTTP+SSE (2024-11-05) transport of this server;
// see SSEHandler.
func (s *Server) SSE() http.Handler { return sseHandler{s} }

type sseHandler struct{ s *Server }

func (h sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	msg, perr, ok := s.readPOST(w, r)
	if !ok || s.gate(w, r, msg) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.serveSSEStream(w, r)
	case http.MethodPost:
		s.serveSSEPost(w, r, msg, perr)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// serveSSEStream holds the stream: it announces the endpoint, then answers
// the messages POSTed there, in order, until the client leaves.
func (s *Server) serveSSEStream(w http.ResponseWriter, r *http.Request) {
	id := newSessionID()
	st := &sseStream{creds: s.creds(r), inbox: make(chan *inMessage, 32)}
	s.mu.Lock()
	s.streams[id] = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, id)
		s.mu.Unlock()
	}()

	p := s.newPeer(w, r, false)
	if p.startStream() != nil || p.writeEvent("endpoint", strings.NewReader(endpointURI(r.URL.Path, id))) != nil {
		return
	}
	ctx := r.Context()
	for {
		select {
		case m := <-st.inbox:
			if m.isNotification() {
				s.core.notification(ctx, &st.sess, m, p)
				continue
			}
			rep := s.core.handle(ctx, &st.sess, m, st.creds, s.core.modern(m, ""), p)
			if rep.msg != nil && p.event("message", rep) != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		}
	}
}

// endpointURI is relative to the stream's own URL: its last path segment
// and the session, so a client must resolve it as a URI reference.
func endpointURI(urlPath, id string) string {
	base := path.Base(urlPath)
	if strings.HasSuffix(urlPath, "/") || base == "/" || base == "." {
		return "?sessionId=" + id
	}
	return base + "?sessionId=" + id
}

// serveSSEPost takes one message for a stream: 202, and the reply goes out
// on the stream.
func (s *Server) serveSSEPost(w http.ResponseWriter, r *http.Request, msg *inMessage, perr *rpcError) {
	s.mu.Lock()
	st := s.streams[r.URL.Query().Get("sessionId")]
	s.mu.Unlock()
	if st == nil {
		http.Error(w, "probetest: unknown sessionId: open the stream with GET first", http.StatusNotFound)
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
	select {
	case st.inbox <- msg:
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("Accepted"))
	default:
		http.Error(w, "probetest: too many messages in flight on this stream", http.StatusServiceUnavailable)
	}
}

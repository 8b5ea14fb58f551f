package probetest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// replay is a reply DropStream kept for the GET that resumes its stream.
type replay struct {
	rep     reply
	session string
	prefix  string // the stream's event id prefix
	dropped time.Time
}

// Resume is one GET that resumed a dropped stream with Last-Event-ID.
type Resume struct {
	LastEventID string
	// After is how long after the stream dropped the GET came: at least
	// the retry: interval, for a client that honours it.
	After time.Duration
}

// Resumes returns every GET that resumed a dropped stream, in order.
func (s *Server) Resumes() []Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resumes)
}

// dropStream is DropStream's answer: the first stream of each method is
// cut after its priming event and a retry: interval; later ones are
// answered in full.
func (s *Server) dropStream(r *http.Request, p *httpPeer, rep reply, method string, modern bool) {
	s.mu.Lock()
	_, done := s.dropped[method]
	if !done {
		s.dropped[method] = time.Now()
	}
	s.nextID++
	prefix := fmt.Sprintf("stream%d/", s.nextID)
	s.mu.Unlock()
	p.idPrefix = prefix
	if p.startStream() != nil {
		return
	}
	if done {
		_ = p.event("message", rep)
		return
	}
	retry := s.core.cfg.RetryMS
	if retry == 0 {
		retry = DropRetryMS
	}
	_, _ = io.WriteString(p.body, "retry: "+strconv.Itoa(retry)+"\n\n")
	p.flush()
	if !modern {
		session := r.Header.Get("Mcp-Session-Id")
		if session == "" { // initialize: the session it opens
			session = p.w.Header().Get("Mcp-Session-Id")
		}
		s.mu.Lock()
		s.replays[prefix+"1"] = replay{rep: rep, session: session, prefix: prefix, dropped: time.Now()}
		s.mu.Unlock()
	}
	// The connection drops mid-stream, without the reply.
	panic(http.ErrAbortHandler)
}

// resumeStream answers a GET with Last-Event-ID: the kept reply, as the
// stream's next event, then the end of the stream.
func (s *Server) resumeStream(w http.ResponseWriter, r *http.Request, last string) {
	s.mu.Lock()
	rp, ok := s.replays[last]
	ok = ok && rp.session == r.Header.Get("Mcp-Session-Id")
	if ok {
		delete(s.replays, last)
		s.resumes = append(s.resumes, Resume{LastEventID: last, After: time.Since(rp.dropped)})
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "probetest: no stream to resume after event "+sanitize.Truncate(last, 60), http.StatusNotFound)
		return
	}
	p := s.newPeer(w, r, true)
	p.idPrefix = rp.prefix
	p.nextEvent = 1 // the priming event the client saw
	p.streaming = true
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_ = p.event("message", rp.rep)
}

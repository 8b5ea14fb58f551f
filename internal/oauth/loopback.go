package oauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// startPath starts the path of a sign-in's start page: the address the
// browser is opened at, which sends it on to the authorization URL.
const startPath = "/start/"

// callback is the loopback redirect listener of one sign-in (RFC 8252
// section 7.3: http://127.0.0.1:PORT/callback, the port the system gave
// unless one is asked for). The first request to the callback path with a
// state, a code or an error is the answer; the browser is shown a page
// that says what came of it. A request with another state is not the
// answer: it is shown an error page and ignored, so that no other local
// process can end a sign-in by calling the redirect URI first.
//
// The browser is opened at a start page of the listener
// (http://127.0.0.1:PORT/start/RANDOM), which sends it on to the
// authorization URL, so that the state and the PKCE challenge stand in no
// command line another local user can read (the opener's and the
// browser's argv): only the port and the start page's name do. The start
// page answers once: a second request means another program read its
// address and may hold the state, so the sign-in ends, whoever was first.
type callback struct {
	redirect string                 // http://127.0.0.1:PORT/callback
	start    string                 // http://127.0.0.1:PORT/start/RANDOM
	startAt  string                 // its path
	authURL  atomic.Pointer[string] // where the start page sends the browser, once known
	opened   atomic.Int32
	state    string // what the answer's state must be
	issuer   string // what its iss must be, when it sends one (RFC 9207)
	// issRequired is set when the authorization server says it sends iss
	// (authorization_response_iss_parameter_supported): an answer
	// without one is then refused.
	issRequired bool
	// strangers counts the requests ignored for another state.
	strangers atomic.Int64
	srv       *http.Server
	done      chan struct{} // closed when Serve has returned

	once sync.Once
	got  chan callbackAnswer // buffered: the first answer
}

// callbackAnswer is what came back to the redirect URI.
type callbackAnswer struct {
	code string
	// problem is why the answer is no code, in words, and kind its class:
	// "denied", "error", "state", "issuer" or "" for a code.
	kind, problem string
	errCode       string // the OAuth error code, when the server sent one
}

// listenCallback starts the listener on 127.0.0.1 (port 0: any free port).
func listenCallback(port int) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	startAt := startPath + rand.Text()
	cb := &callback{
		redirect: "http://" + ln.Addr().String() + callbackPath,
		start:    "http://" + ln.Addr().String() + startAt,
		startAt:  startAt,
		done:     make(chan struct{}),
		got:      make(chan callbackAnswer, 1),
	}
	cb.srv = &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(cb.done)
		_ = cb.srv.Serve(ln) // ends with close
	}()
	return cb, nil
}

func (cb *callback) close() {
	_ = cb.srv.Close()
	<-cb.done
}

// wait returns the answer, or ctx's error when none came before it ended.
func (cb *callback) wait(ctx context.Context) (callbackAnswer, error) {
	select {
	case a := <-cb.got:
		return a, nil
	case <-ctx.Done():
		return callbackAnswer{}, ctx.Err()
	}
}

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == cb.startAt {
		cb.serveStart(w, r)
		return
	}
	if r.URL.Path != callbackPath {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("state") == "" && q.Get("code") == "" && q.Get("error") == "" {
		http.Error(w, "mcpwatch login: this address waits for the authorization server's answer, and this is not one.", http.StatusBadRequest)
		return
	}
	a := cb.judge(q)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	if a.kind == "state" {
		// Not this sign-in's answer (forged, or a stale tab's): the
		// sign-in goes on waiting for its own.
		cb.strangers.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		writePage(w, "Not this sign-in", "mcpwatch login ignored this answer: "+a.problem+". If you are signing in, finish in the tab that 'mcpwatch login' opened, or open the URL it printed.")
		return
	}
	first := false
	cb.once.Do(func() {
		first = true
		cb.got <- a
	})
	switch {
	case !first:
		w.WriteHeader(http.StatusConflict)
		writePage(w, "Already answered", "mcpwatch login has had its answer already; see the terminal.")
	case a.kind == "":
		writePage(w, "Signed in", "mcpwatch received the authorization. Return to the terminal: it finishes signing in there. You can close this tab.")
	default:
		w.WriteHeader(http.StatusBadRequest)
		writePage(w, "Not signed in", "mcpwatch login did not get an authorization: "+a.problem+". See the terminal.")
	}
}

// serveStart sends the browser on to the authorization URL, once; a
// second request ends the sign-in.
func (cb *callback) serveStart(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if to := cb.authURL.Load(); cb.opened.Add(1) == 1 && to != nil {
		http.Redirect(w, r, *to, http.StatusFound)
		return
	}
	cb.once.Do(func() {
		cb.got <- callbackAnswer{kind: "start", problem: "the sign-in's start page was opened twice: another program on this machine may have read its address, and the sign-in's state with it, so the sign-in was ended"}
	})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(http.StatusGone)
	writePage(w, "Sign-in ended", "This sign-in's start page was opened a second time, so mcpwatch login ended the sign-in: another program on this machine may have read its address. Run 'mcpwatch login' again.")
}

// judge checks an answer: the state first (an answer with another state
// is not ours, whatever it says), then an error, then the issuer.
func (cb *callback) judge(q url.Values) callbackAnswer {
	switch {
	case q.Get("state") != cb.state:
		return callbackAnswer{kind: "state", problem: "the answer carries another state than the request (a forged or stale sign-in)"}
	case q.Get("error") != "":
		code := safeCode(q.Get("error"))
		desc := sanitize.OneLine(sanitize.Truncate(q.Get("error_description"), 200))
		problem := "the authorization server answered with error " + code
		if code == "" {
			problem = "the authorization server answered with an error"
		}
		if desc != "" {
			problem += fmt.Sprintf(" (%q)", desc)
		}
		kind := "error"
		if code == "access_denied" {
			kind = "denied"
		}
		return callbackAnswer{kind: kind, problem: problem, errCode: code}
	case q.Get("iss") == "" && cb.issRequired:
		return callbackAnswer{kind: "issuer", problem: "the answer carries no iss, although the authorization server's metadata says it sends one (authorization_response_iss_parameter_supported, RFC 9207): it may come from another authorization server (a mix-up), so it was refused"}
	case q.Get("iss") != "" && cb.issuer != "" && trimSlash(q.Get("iss")) != trimSlash(cb.issuer):
		return callbackAnswer{kind: "issuer", problem: "the answer names another authorization server (iss) than the one asked (a mix-up), so it was refused"}
	case q.Get("code") == "":
		return callbackAnswer{kind: "error", problem: "the answer carries no code"}
	}
	return callbackAnswer{code: q.Get("code")}
}

func writePage(w http.ResponseWriter, title, text string) {
	_, _ = fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>mcpwatch login: %s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

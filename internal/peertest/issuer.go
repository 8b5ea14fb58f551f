package peertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/issuer"
)

// Answers are the documented answers of one service of the issuer
// catalogue to its identity request (internal/issuer/testdata/answers):
// what the stand-in of its identity endpoint sends back.
type Answers struct {
	Source string `json:"source"`
	// Credentials are sample values by role: a good and a fake one of the
	// primary's format, a value for each companion.
	Credentials map[string]struct {
		Good string `json:"good"`
		Fake string `json:"fake"`
	} `json:"credentials"`
	Accepted Answer  `json:"accepted"`
	Rejected Answer  `json:"rejected"`
	Expiring *Answer `json:"expiring,omitempty"`
	Revoked  *Answer `json:"revoked,omitempty"`
}

// Answer is one HTTP answer: its status, headers and body (a JSON value,
// or a string sent as it is). "{expiry}" in a header or the body stands
// for the credential's expiry in the catalogue's layout.
type Answer struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
}

// answersDir is internal/issuer/testdata/answers of this checkout.
func answersDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("internal", "issuer", "testdata", "answers")
	}
	return filepath.Join(filepath.Dir(file), "..", "issuer", "testdata", "answers")
}

// LoadAnswers reads the documented answers of a catalogue service.
func LoadAnswers(id string) (Answers, error) {
	var a Answers
	raw, err := os.ReadFile(filepath.Join(answersDir(), id+".json")) //nolint:gosec // G304: the repository's own fixtures
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("answers of %s: %w", id, err)
	}
	return a, nil
}

// NewIssuer starts a stand-in of a catalogue service's identity endpoint
// (internal/issuer), answering as the service's documentation shows: the
// accepted answer to a good credential (the expiring one, with its
// expiry, to one given ExpireAt), the revoked answer (else the rejected
// one) to a revoked credential, the rejected one to any other. A request
// that is not the catalogue's (another method or path, the credential
// elsewhere than the request puts it) is answered 404: a test sees a
// check that asked the wrong thing fail. Reach it through a Proxy (Go
// programs) or NodeEnv.
func NewIssuer(id string, good ...string) (*API, error) {
	s, ok := issuer.Lookup(id)
	if !ok {
		return nil, fmt.Errorf("peertest: no issuer %q in the catalogue", id)
	}
	return NewIssuerAt(id, s.Base.URL, good...)
}

// NewIssuerAt is NewIssuer for the service at base, the base a server's
// setting names (a self-hosted instance, a customer's own site): a service
// with no documented base is stood in for so.
func NewIssuerAt(id, base string, good ...string) (*API, error) {
	svc, answer, err := identityAt(id, base)
	if err != nil {
		return nil, err
	}
	a := newAPIOf(svc.Service.Service, svc.origin, svc.credential, func(a *API, w http.ResponseWriter, r *http.Request, v verdict) {
		if !answer(a, w, r, v) {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		}
	}, good)
	a.mu.Lock()
	a.writes = func(r *http.Request) bool { return !svc.isRequest(r) }
	a.mu.Unlock()
	return a, nil
}

// identityService is a catalogue service as its stand-in reads requests.
type identityService struct {
	*issuer.Service
	origin string
	path   *regexp.Regexp
}

// isRequest: r is the catalogue's request of the service.
func (svc identityService) isRequest(r *http.Request) bool {
	return r.Method == svc.Request.Method && svc.path.MatchString(r.URL.EscapedPath())
}

func (svc identityService) credential(r *http.Request) string { return primaryOf(svc.Service, r) }

// identity is the answer of a catalogue service's stand-in to its identity
// request: it answers and returns true for that request (whatever the
// stand-in serves besides), false for any other. A stand-in of an API
// that an npm server calls adds it so, and mcpwatch's own check of the
// same credential reaches the same stand-in.
func identity(id string) (identityService, func(a *API, w http.ResponseWriter, r *http.Request, v verdict) bool, error) {
	s, ok := issuer.Lookup(id)
	if !ok {
		return identityService{}, nil, fmt.Errorf("peertest: no issuer %q in the catalogue", id)
	}
	return identityAt(id, s.Base.URL)
}

// identityAt is identity for the service at base.
func identityAt(id, rawBase string) (identityService, func(a *API, w http.ResponseWriter, r *http.Request, v verdict) bool, error) {
	s, ok := issuer.Lookup(id)
	if !ok {
		return identityService{}, nil, fmt.Errorf("peertest: no issuer %q in the catalogue", id)
	}
	ans, err := LoadAnswers(id)
	if err != nil {
		return identityService{}, nil, err
	}
	base, err := url.Parse(rawBase)
	if err != nil || base.Scheme != "https" || base.Host == "" {
		return identityService{}, nil, fmt.Errorf("peertest: issuer %q at %q: an https base", id, rawBase)
	}
	svc := identityService{Service: s, origin: base.Scheme + "://" + base.Host,
		path: regexp.MustCompile("^" + templateRegexp(strings.TrimRight(base.Path, "/")+s.Request.Path) + "$")}
	return svc, func(a *API, w http.ResponseWriter, r *http.Request, v verdict) bool {
		if !svc.isRequest(r) || v == credNone {
			return false
		}
		a.mu.Lock()
		a.identities++
		a.mu.Unlock()
		switch v {
		case credValid:
			if exp, expiring := a.expiry(primaryOf(s, r)); expiring && ans.Expiring != nil {
				ans.Expiring.write(w, s, exp)
				return true
			}
			ans.Accepted.write(w, s, time.Time{})
		case credRevoked:
			if ans.Revoked != nil {
				ans.Revoked.write(w, s, time.Time{})
				return true
			}
			ans.Rejected.write(w, s, time.Time{})
		default:
			ans.Rejected.write(w, s, time.Time{})
		}
		return true
	}, nil
}

// ExpireAt makes token a good credential that expires at t: the service
// answers with its expiring answer.
func (a *API) ExpireAt(token string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.revoked, token)
	a.valid[token] = true
	a.expires[token] = t
}

func (a *API) expiry(token string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.expires[token]
	return t, ok
}

// write sends the answer, "{expiry}" filled in with exp in svc's layout.
func (ans Answer) write(w http.ResponseWriter, svc *issuer.Service, exp time.Time) {
	fill := func(s string) string {
		if exp.IsZero() || svc.Expiry == nil {
			return s
		}
		return strings.ReplaceAll(s, "{expiry}", formatTime(svc.Expiry.Layout, exp))
	}
	for k, v := range ans.Headers {
		w.Header().Set(k, fill(v))
	}
	body := []byte(ans.Body)
	var text string
	if json.Unmarshal(body, &text) == nil {
		body = []byte(fill(text)) // a string body is sent as it is
	} else {
		body = []byte(fill(string(body)))
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
	}
	w.WriteHeader(ans.Status)
	_, _ = w.Write(body)
}

// formatTime writes t in a catalogue layout.
func formatTime(layout string, t time.Time) string {
	t = t.UTC()
	switch layout {
	case "rfc3339":
		return t.Format(time.RFC3339)
	case "date":
		return t.Format(time.DateOnly)
	case "unix":
		return fmt.Sprint(t.Unix())
	case "unix_ms":
		return fmt.Sprint(t.UnixMilli())
	}
	return t.Format(layout)
}

// templateRegexp is a request template as a pattern: each "{role}" any
// run of characters but '/'.
func templateRegexp(tmpl string) string {
	var b strings.Builder
	for _, part := range regexp.MustCompile(`\{[a-z_]+\}`).Split(tmpl, -1) {
		if b.Len() > 0 || strings.HasPrefix(tmpl, "{") {
			b.WriteString(`[^/]+`)
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	return b.String()
}

// primaryOf is the primary credential of a request, read where the
// catalogue's request puts it: a header's template, basic auth, the path,
// the query, the JSON body. "" when it is not there.
func primaryOf(svc *issuer.Service, r *http.Request) string {
	role := "{" + svc.Credentials[0].Role + "}"
	req := svc.Request
	read := func(tmpl, v string) (string, bool) {
		i := strings.Index(tmpl, role)
		if i < 0 {
			return "", false
		}
		re := regexp.MustCompile("^" + regexp.QuoteMeta(tmpl[:i]) + "(.*?)" + regexp.QuoteMeta(tmpl[i+len(role):]) + "$")
		if m := re.FindStringSubmatch(v); m != nil {
			return m[1], true
		}
		return "", true
	}
	for k, tmpl := range req.Headers {
		if v, ok := read(tmpl, r.Header.Get(k)); ok {
			return v
		}
	}
	if len(req.Basic) == 2 {
		if user, pass, ok := r.BasicAuth(); ok {
			if v, ok := read(req.Basic[1], pass); ok {
				return v
			}
			if v, ok := read(req.Basic[0], user); ok {
				return v
			}
		}
		if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Basic ") {
			if _, err := base64.StdEncoding.DecodeString(h[6:]); err != nil {
				return ""
			}
		}
	}
	for k, tmpl := range req.Query {
		if v, ok := read(tmpl, r.URL.Query().Get(k)); ok {
			return v
		}
	}
	if strings.Contains(req.Path, role) {
		// The request's path ends with the catalogue's (after the base's).
		want := strings.Split(req.Path, "/")
		have := strings.Split(r.URL.EscapedPath(), "/")
		if len(have) >= len(want) {
			have = have[len(have)-len(want):]
			for i, w := range want {
				if v, ok := read(w, have[i]); ok {
					if u, err := url.PathUnescape(v); err == nil {
						return u
					}
				}
			}
		}
	}
	if len(req.JSON) > 0 && r.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		var doc, tmpl any
		if json.Unmarshal(body, &doc) == nil && json.Unmarshal(req.JSON, &tmpl) == nil {
			if v, ok := findJSON(tmpl, doc, role); ok {
				return v
			}
		}
	}
	return ""
}

// findJSON finds role's value in doc where tmpl has it.
func findJSON(tmpl, doc any, role string) (string, bool) {
	switch t := tmpl.(type) {
	case string:
		if s, ok := doc.(string); ok {
			i := strings.Index(t, role)
			if i >= 0 && strings.HasPrefix(s, t[:i]) && strings.HasSuffix(s, t[i+len(role):]) && len(s) >= len(t)-len(role) {
				return s[i : len(s)-len(t[i+len(role):])], true
			}
		}
	case map[string]any:
		d, _ := doc.(map[string]any)
		for k, v := range t {
			if got, ok := findJSON(v, d[k], role); ok {
				return got, true
			}
		}
	case []any:
		d, _ := doc.([]any)
		for i, v := range t {
			if i < len(d) {
				if got, ok := findJSON(v, d[i], role); ok {
					return got, true
				}
			}
		}
	}
	return "", false
}

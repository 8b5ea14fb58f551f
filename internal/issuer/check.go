package issuer

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// maxAnswer bounds the body of an answer that is read: an identity
// answer is small, and a hostile one costs no more.
const maxAnswer = 64 << 10

// maxQuote bounds the service's words kept of an answer.
const maxQuote = 200

// DefaultTimeout bounds one check when the caller's context allows more.
const DefaultTimeout = 10 * time.Second

// NewClient is the HTTP client checks are made with: the environment's
// proxy (HTTPS_PROXY, NO_PROXY) and CAs (SSL_CERT_FILE, SSL_CERT_DIR),
// TLS 1.2 at least, certificates verified, and no redirect followed: a
// redirect is an answer, and the credential goes nowhere it points.
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	tr.MaxIdleConnsPerHost = 2
	tr.IdleConnTimeout = 90 * time.Second
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Check asks t's service about its credential, once, within ctx (and
// DefaultTimeout), with client (NewClient's, or a test's). It always
// answers: a skipped tie, an unreachable service, an answer the catalogue
// does not describe are verdicts too. Nothing it returns holds a secret
// value, and no error it reads names the request's URL.
func Check(ctx context.Context, client *http.Client, t Tie, version string) probe.IssuerCheck {
	out := probe.IssuerCheck{Credential: t.Credential, Service: t.Service.ID, Endpoint: t.Endpoint(), Checked: time.Now().UTC()}
	if t.Skip != "" {
		out.Verdict, out.Note = Unknown, "not checked: "+t.Skip
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := t.request(ctx, version)
	if err != nil {
		out.Verdict, out.Note = Unknown, "not checked: "+err.Error()
		return out
	}
	resp, err := client.Do(req)
	out.Checked = time.Now().UTC()
	if err != nil {
		out.Verdict, out.Quote = Unreachable, t.scrub(describeError(err))
		return out
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	out.Status = resp.StatusCode
	return t.judge(out, resp, body, time.Now())
}

// request makes the check's request: the base and the path, every
// template filled, each value escaped for where it goes.
func (t Tie) request(ctx context.Context, version string) (*http.Request, error) {
	r := t.Service.Request
	fill := func(s string, escape func(string) string) string {
		return patterns().template.ReplaceAllStringFunc(s, func(m string) string {
			return escape(t.values[m[1:len(m)-1]])
		})
	}
	u, err := url.Parse(t.Base + fill(r.Path, url.PathEscape))
	if err != nil || u.Scheme != "https" {
		return nil, errors.New("the request's URL is not https")
	}
	if len(r.Query) > 0 {
		q := u.Query()
		for k, v := range r.Query {
			q.Set(k, fill(v, func(s string) string { return s }))
		}
		u.RawQuery = q.Encode()
	}
	var body io.Reader
	if len(r.JSON) > 0 {
		body = strings.NewReader(fill(string(r.JSON), jsonEscape))
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, errors.New("the request cannot be made")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "mcpwatch/"+version+" (credential check; +https://github.com/mcpwatch/mcpwatch)")
	req.Header.Set("Accept", "application/json")
	for k, v := range r.Headers {
		v = fill(v, func(s string) string { return s })
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, errors.New("a credential holds a line break, which no header may carry")
		}
		req.Header.Set(k, v)
	}
	if len(r.Basic) == 2 {
		user, pass := fill(r.Basic[0], func(s string) string { return s }), fill(r.Basic[1], func(s string) string { return s })
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	return req, nil
}

// jsonEscape escapes a value for the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// judge reads an answer.
func (t Tie) judge(out probe.IssuerCheck, resp *http.Response, body []byte, now time.Time) probe.IssuerCheck {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		doc = nil
	}
	status := resp.StatusCode
	for _, a := range t.Service.Answers {
		if a.matches(status, doc) {
			out.Verdict = a.Verdict
			break
		}
	}
	switch {
	case out.Verdict != "":
	case status == http.StatusTooManyRequests:
		out.Verdict = Limited
		if d, ok := retryAfter(resp.Header, now); ok {
			out.RetryAfter = d.Seconds()
		}
	case status >= 500:
		out.Verdict = Unreachable
	case status >= 300 && status < 400:
		out.Verdict, out.Note = Unknown, "the service answered a redirect, which is not followed"
	default:
		out.Verdict = Unknown
		out.Note = fmt.Sprintf("the service answered HTTP %d, which its documentation does not describe for this request", status)
	}
	switch out.Verdict {
	case Accepted:
		t.readAccepted(&out, resp.Header, doc)
	case Rejected, Unreachable, Unknown, Limited:
		out.Quote = t.scrub(t.Service.words(status, doc, body))
	}
	return out
}

// readAccepted reads the expiry and scopes an accepted answer tells.
func (t Tie) readAccepted(out *probe.IssuerCheck, h http.Header, doc any) {
	if f := t.Service.Expiry; f != nil {
		if v, ok := f.read(h, doc); ok {
			if exp, err := parseTime(f.Layout, v); err == nil && exp.After(time.Unix(0, 0)) {
				exp = exp.UTC()
				out.Expiry = &exp
			}
		}
	}
	if f := t.Service.Scopes; f != nil {
		if v, ok := f.readList(h, doc); ok {
			out.Scopes = v
			for _, need := range t.Scopes {
				if !containsFold(v, need) {
					out.MissingScopes = append(out.MissingScopes, need)
				}
			}
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// matches reports whether an answer of status with the document doc is
// a's.
func (a Answer) matches(status int, doc any) bool {
	if !containsInt(a.Status, status) {
		return false
	}
	for p, want := range a.Equal {
		got, ok := lookup(doc, p)
		if want == nil {
			if ok && got != nil {
				return false
			}
			continue
		}
		if !ok || !equalJSON(got, want) {
			return false
		}
	}
	for p, wants := range a.OneOf {
		got, ok := lookup(doc, p)
		if !ok {
			return false
		}
		found := false
		for _, w := range wants {
			if equalJSON(got, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// equalJSON compares two decoded JSON values (numbers as float64).
func equalJSON(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// lookup follows a dotted path ("result.status", "errors.0.message") in a
// decoded document.
func lookup(doc any, p string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(p, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// read is the field's value as text.
func (f Field) read(h http.Header, doc any) (string, bool) {
	if f.Header != "" {
		v := h.Get(f.Header)
		return v, v != ""
	}
	v, ok := lookup(doc, f.JSON)
	switch v := v.(type) {
	case string:
		return v, ok && v != ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), ok
	}
	return "", false
}

// readList is the field's value as a list: a JSON array of strings, or a
// text of items separated by commas or spaces.
func (f Field) readList(h http.Header, doc any) ([]string, bool) {
	if f.JSON != "" {
		if v, ok := lookup(doc, f.JSON); ok {
			if arr, ok := v.([]any); ok {
				out := []string{}
				for _, x := range arr {
					if s, ok := x.(string); ok {
						out = append(out, s)
					}
				}
				return out, true
			}
		}
	}
	s, ok := f.read(h, doc)
	if !ok && f.Header != "" {
		// A header that is there but empty: no scopes.
		if _, present := h[http.CanonicalHeaderKey(f.Header)]; present {
			return []string{}, true
		}
	}
	if !ok {
		return nil, false
	}
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	return out, true
}

// words are the service's own words in an answer: its message members,
// else the start of its body, else its status.
func (svc *Service) words(status int, doc any, body []byte) string {
	for _, p := range svc.Message {
		if v, ok := lookup(doc, p); ok {
			if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
				return fmt.Sprintf("HTTP %d: %s", status, s)
			}
		}
	}
	text := strings.TrimSpace(string(body))
	if text == "" || doc == nil && strings.HasPrefix(strings.ToLower(text), "<") {
		return fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	return fmt.Sprintf("HTTP %d: %s", status, text)
}

// scrub makes a text one line of the service's words, every secret the
// tie sent taken out before it is cut, so that no cut leaves a part of
// one. (What a probe keeps of it is scrubbed again with the rest of the
// result, by the runner's rule for every encoding and every cut.)
func (t Tie) scrub(s string) string {
	s = sanitize.OneLine(s)
	for _, v := range t.Secrets() {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return sanitize.Truncate(s, maxQuote)
}

const redacted = "<redacted>"

// describeError is a failed request's error without its URL (which may
// carry a credential in its path or query): the cause only.
func describeError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer in time: " + err.Error()
	}
	return err.Error()
}

// retryAfter reads how long a service asks to wait: Retry-After (seconds
// or an HTTP date), else X-RateLimit-Reset (a Unix time, or seconds).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	for _, name := range []string{"X-RateLimit-Reset", "RateLimit-Reset", "X-Ratelimit-Reset-Requests"} {
		v := strings.TrimSpace(h.Get(name))
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 {
			continue
		}
		if n > 1e9 { // a Unix time
			return max(time.Unix(int64(n), 0).Sub(now), 0), true
		}
		return time.Duration(n * float64(time.Second)), true
	}
	return 0, false
}

package probe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// httpConn is a streamable HTTP conn: each message is its own POST, and the
// answer comes back as one JSON body or as an event stream for that request
// alone. It never opens the standalone GET stream: a probe has nothing to
// wait for there.
type httpConn struct {
	client   *httpClient
	endpoint *url.URL
	where    string // the endpoint without query or user info, for messages
	maxBytes int64
	obs      *observer
	lastID   atomic.Int64

	mu        sync.Mutex
	era       Era    // set by setProtocol; empty until then
	version   string // negotiated; set by setProtocol
	sessionID string // legacy: from the initialize response
}

var _ conn = (*httpConn)(nil)

// newHTTPConn prepares a streamable HTTP conn. It does no network I/O.
func newHTTPConn(t Target, opts Options, obs *observer) (*httpConn, error) {
	client, err := newHTTPClient(t, opts)
	if err != nil {
		return nil, err
	}
	return &httpConn{
		client:   client,
		endpoint: client.target,
		where:    redacted(client.target),
		maxBytes: opts.MaxMessageBytes,
		obs:      obs,
	}, nil
}

func (c *httpConn) setProtocol(era Era, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.era, c.version = era, version
}

// call sends one request and reads its response. A modern response stream
// that drops before the response cannot be resumed (the modern transport
// has no event ids to resume from): the request is sent again with a new
// id, at most maxStreamResumes times, unless it is a tools/call, which is
// never sent twice. A legacy stream is resumed instead (readStream).
func (c *httpConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := c.callOnce(ctx, method, params)
	return c.resend(ctx, method, params, raw, err, 1)
}

// resend takes the outcome of a request sent sent times so far, and sends
// it again while its modern response stream dropped (see call).
func (c *httpConn) resend(ctx context.Context, method string, params any, raw json.RawMessage, err error, sent int) (json.RawMessage, error) {
	for ; ; sent++ {
		var drop *streamDropped
		if !errors.As(err, &drop) {
			return raw, err
		}
		if !drop.modern || method == "tools/call" || sent > maxStreamResumes || ctx.Err() != nil {
			return nil, drop.failure()
		}
		c.obs.record("send", nil, "the response stream dropped before the response: the request again, with a new id")
		raw, err = c.callOnce(ctx, method, params)
	}
}

func (c *httpConn) callOnce(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, resp, modern, err := c.send(ctx, method, params)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	what := method + " to " + c.where
	mt, err := c.checkResponse(resp, method, what)
	if err != nil {
		return nil, err
	}
	var msg *message
	if isEventStream(mt) {
		msg, err = c.readStream(ctx, resp.Body, id, what, modern)
	} else {
		msg, err = c.readJSON(ctx, resp, id, what)
	}
	if err != nil {
		return nil, err
	}
	return responseResult(msg, method, resp.StatusCode)
}

// send POSTs one request with a new id; modern says whether it went out as
// a modern request.
func (c *httpConn) send(ctx context.Context, method string, params any) (json.RawMessage, *http.Response, bool, error) {
	id := json.RawMessage(strconv.FormatInt(c.lastID.Add(1), 10))
	body, rawParams, err := encode(id, method, params)
	if err != nil {
		return nil, nil, false, err
	}
	p := peekParams(rawParams)
	resp, err := c.post(ctx, method, p, body)
	return id, resp, c.modern(p), err
}

// modern reports whether a request with these params goes out as modern:
// in the modern era, or, before the era is settled, when its _meta names
// a modern version.
func (c *httpConn) modern(p sentParams) bool {
	c.mu.Lock()
	era := c.era
	c.mu.Unlock()
	return era == EraModern || (era != EraLegacy && p.Meta.Version != "")
}

// checkResponse refuses a response that cannot carry the answer to a
// request (a status other than 2xx, 202, a foreign content type), keeps
// the session id of an initialize response, and returns the media type:
// an event stream, or JSON ("" taken for JSON).
func (c *httpConn) checkResponse(resp *http.Response, method, what string) (string, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", c.statusError(resp, method)
	}
	if method == "initialize" {
		c.keepSession(resp.Header)
	}
	switch mt := mediaType(resp.Header.Get("Content-Type")); {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return "", failf(ReasonProtocol, "%s: HTTP %d with no response, as if the request were a notification", what, resp.StatusCode)
	case isEventStream(mt), mt == "application/json", mt == "":
		return mt, nil
	default:
		return "", failf(ReasonProtocol, "%s: HTTP %d with content type %q, neither JSON nor an event stream", what, resp.StatusCode, sanitize.Truncate(mt, 60))
	}
}

func (c *httpConn) notify(ctx context.Context, method string, params any) error {
	body, rawParams, err := encode(nil, method, params)
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, method, peekParams(rawParams), body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp, method)
	}
	discardBody(resp.Body)
	return nil
}

// sessionEndTimeout bounds the DELETE that ends a legacy session: the probe
// has what it came for, and a server slow to forget a session must not hold
// it until the deadline.
const sessionEndTimeout = time.Second

// close ends a legacy session with DELETE (a 405 means the server keeps no
// sessions to end, which is fine) and closes the probe's connections.
func (c *httpConn) close(ctx context.Context) {
	defer c.client.shutdown()
	c.mu.Lock()
	era, version, session := c.era, c.version, c.sessionID
	c.mu.Unlock()
	if session == "" || era == EraModern || ctx.Err() != nil {
		return
	}
	sub, cancel := context.WithTimeout(ctx, sessionEndTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(sub, http.MethodDelete, c.endpoint.String(), nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", session)
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	c.obs.record("send", nil, "DELETE session")
	resp, err := c.client.Do(req)
	switch {
	case err == nil:
	case ctx.Err() != nil: // after the deadline, the probe's failure says it all
		return
	case sub.Err() != nil:
		c.obs.warn("ending the session: DELETE %s: no answer within %s", c.where, sessionEndTimeout)
		return
	default:
		c.obs.warn("ending the session: %v", httpTransportError(sub, err, "DELETE "+c.where))
		return
	}
	c.obs.recordStatus(resp)
	discardBody(resp.Body)
	resp.Body.Close()
}

// post sends one message. method is empty for our replies to server
// requests, which carry no Mcp-Method.
func (c *httpConn) post(ctx context.Context, method string, params sentParams, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, failf(ReasonConfig, "POST %s: %v", c.where, err)
	}
	c.setHeaders(req.Header, method, params)
	c.obs.record("send", body, "POST")
	resp, err := c.client.Do(req)
	if err != nil {
		label := method
		if label == "" {
			label = "reply"
		}
		return nil, httpTransportError(ctx, err, label+" to "+c.where)
	}
	c.obs.recordStatus(resp)
	return resp, nil
}

// setHeaders writes the headers of one POST for the era in force. A
// request whose _meta names a modern version is modern whatever was set
// before: that is how the first server/discover goes out, and the header
// must equal the _meta version.
func (c *httpConn) setHeaders(h http.Header, method string, p sentParams) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	era, version, session := c.era, c.version, c.sessionID
	c.mu.Unlock()
	if era == EraModern || (era != EraLegacy && p.Meta.Version != "") { // as c.modern says
		if p.Meta.Version != "" {
			version = p.Meta.Version
		}
		if version != "" {
			h.Set("MCP-Protocol-Version", headerSafe(version))
		}
		if method != "" {
			h.Set("Mcp-Method", headerSafe(method))
		}
		if name := p.name(method); name != "" {
			h.Set("Mcp-Name", headerSafe(name))
		}
		return
	}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	if version != "" && method != "initialize" {
		h.Set("MCP-Protocol-Version", version)
	}
}

// statusError maps a non-2xx answer; a 404 to a request that carried a
// legacy session id means the server dropped the session.
func (c *httpConn) statusError(resp *http.Response, method string) error {
	err := httpStatusError(resp, method, c.where, c.client.redirects)
	var f *Failure
	if resp.StatusCode == http.StatusNotFound && resp.Request != nil &&
		resp.Request.Header.Get("Mcp-Session-Id") != "" && errors.As(err, &f) {
		f.Err = fmt.Errorf("%w (the server no longer knows the session: it expired or was ended)", f.Err)
	}
	return err
}

// keepSession remembers the legacy session id of an initialize response.
func (c *httpConn) keepSession(h http.Header) {
	id := h.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	if !visibleASCII(id) || len(id) > 1024 {
		c.obs.warn("ignored the Mcp-Session-Id of %s: not visible ASCII of at most 1024 bytes", c.where)
		return
	}
	c.mu.Lock()
	c.sessionID = id
	c.mu.Unlock()
}

// readJSON reads a single JSON-RPC response body.
func (c *httpConn) readJSON(ctx context.Context, resp *http.Response, id json.RawMessage, what string) (*message, error) {
	body, err := readBoundedBody(ctx, resp, c.maxBytes, what)
	if err != nil {
		return nil, err
	}
	c.obs.record("recv", body, "")
	msg, err := parseMessage(body)
	if err != nil {
		return nil, failf(ReasonProtocol, "%s: %v", what, err)
	}
	if msg.Method != "" {
		return nil, failf(ReasonProtocol, "%s: the body is a %s message, not the response", what, sanitize.Truncate(msg.Method, 60))
	}
	if !sameID(msg.ID, id) {
		return nil, wrongID(what, msg.ID, id)
	}
	return msg, nil
}

// answer replies to a request the server sent inside a response stream.
// A failed reply is a warning: the server may still answer our request.
func (c *httpConn) answer(ctx context.Context, req *message) {
	c.mu.Lock()
	era := c.era
	c.mu.Unlock()
	reply := answerServerRequest(req, era, c.obs)
	if reply == nil {
		return
	}
	body, err := json.Marshal(reply)
	if err != nil {
		return
	}
	resp, err := c.post(ctx, "", sentParams{}, body)
	if err != nil {
		c.obs.warn("answering the server's %s request: %v", sanitize.Truncate(req.Method, 60), err)
		return
	}
	discardBody(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		c.obs.warn("answering the server's %s request: HTTP %d", sanitize.Truncate(req.Method, 60), resp.StatusCode)
	}
}

func wrongID(what string, got, want json.RawMessage) error {
	return failf(ReasonProtocol, "%s: a response with id %s, the request had id %s", what, sanitize.Truncate(string(got), 40), want)
}

// recordStatus notes an answer's status in the transcript. The note is
// made only when a transcript is kept: without one, formatting it cost a
// Sprintf an exchange, at a fleet's probe rate.
func (o *observer) recordStatus(resp *http.Response) {
	if o.transcript {
		o.record("recv", nil, statusNote(resp))
	}
}

// recordEvent records an event's data in the transcript, copied only when
// a transcript is kept.
func (o *observer) recordEvent(data string) {
	if o.transcript {
		o.record("recv", []byte(data), "")
	}
}

// statusNote describes a response for the transcript without any header
// value.
func statusNote(resp *http.Response) string {
	kind := ""
	switch mt := mediaType(resp.Header.Get("Content-Type")); {
	case isEventStream(mt):
		kind = ", event stream"
	case mt == "application/json":
		kind = ", JSON"
	}
	return fmt.Sprintf("HTTP %d%s", resp.StatusCode, kind)
}

// sentParams is what the headers of a modern request repeat from its
// params.
type sentParams struct {
	Meta struct {
		Version string `json:"io.modelcontextprotocol/protocolVersion"`
	} `json:"_meta"`
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// peekParams reads what the headers repeat from params we encoded, once a
// request; params naming none of it are not parsed.
func peekParams(raw json.RawMessage) sentParams {
	var p sentParams
	if len(raw) > 0 && (bytes.Contains(raw, []byte(`"_meta"`)) || bytes.Contains(raw, []byte(`"name"`)) || bytes.Contains(raw, []byte(`"uri"`))) {
		_ = json.Unmarshal(raw, &p) // params we encoded ourselves; a miss only omits headers
	}
	return p
}

// name is the Mcp-Name value of the methods that have one.
func (p sentParams) name(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return p.Name
	case "resources/read":
		return p.URI
	}
	return ""
}

// headerSafe passes a value that can stand in a header as it is, and
// encodes any other (or one that looks like the encoding) as
// =?base64?...?=, as the modern transport says.
func headerSafe(v string) string {
	safe := len(v) > 0 && v[0] != ' ' && v[len(v)-1] != ' ' && !bytes.HasPrefix([]byte(v), []byte("=?base64?"))
	for i := 0; safe && i < len(v); i++ {
		safe = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

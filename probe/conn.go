package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// conn is one JSON-RPC channel to a server: a stdio process, a streamable
// HTTP endpoint or a legacy HTTP+SSE stream. The MCP logic above it (era
// detection, initialize, tools/list pagination, timings) is written once in
// session.go; a conn only moves messages and turns what goes wrong on its
// wire into a *Failure or an *RPCError.
//
// A conn answers server requests (ping gets {}, anything else -32601) and
// reports notifications to its observer; it never surfaces them to call.
type conn interface {
	// call sends one request and returns its result, or an *RPCError when
	// the server answered with an error, or a *Failure.
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// notify sends one notification.
	notify(ctx context.Context, method string, params any) error
	// setProtocol tells the conn what was negotiated, for what it sends
	// from then on (MCP-Protocol-Version, Mcp-Session-Id handling).
	setProtocol(era Era, version string)
	// close ends the conn: a stdio process group is killed and reaped, a
	// legacy HTTP session is ended with DELETE. It is bounded by ctx.
	close(ctx context.Context)
}

// message is a JSON-RPC 2.0 message of any kind.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && len(m.ID) > 0 }
func (m *message) isNotification() bool { return m.Method != "" && len(m.ID) == 0 }
func (m *message) isResponse() bool     { return m.Method == "" && len(m.ID) > 0 }

// RPCError is a JSON-RPC error answered by the server.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// HTTPStatus is the status of the HTTP response that carried the error
	// (streamable HTTP), 0 otherwise. Era detection needs it: a -32601 with
	// 404 is a modern answer, a -32601 on stdio is a legacy one.
	HTTPStatus int `json:"-"`
	// Method is the request that failed, for error messages.
	Method string `json:"-"`
}

func (e *RPCError) Error() string {
	msg := sanitize.Truncate(e.Message, 200)
	if e.Method != "" {
		return fmt.Sprintf("%s: JSON-RPC error %d: %s", e.Method, e.Code, msg)
	}
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, msg)
}

// Failure is a probe failure with its stable reason. Err is for people and
// must never carry a header value, an environment value or a body longer
// than a line.
type Failure struct {
	Reason     Reason
	Err        error
	HTTPStatus int
	Challenge  *Challenge
}

func (f *Failure) Error() string {
	if f.Err == nil {
		return string(f.Reason)
	}
	return f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

func failf(reason Reason, format string, args ...any) *Failure {
	return &Failure{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ctxFailure is the failure of a request cut short by its context: the
// deadline (timeout) or the caller giving up (canceled).
func ctxFailure(ctx context.Context, what string, start time.Time) *Failure {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		budget := ""
		if deadline, ok := ctx.Deadline(); ok {
			budget = fmt.Sprintf(" of %s", deadline.Sub(start).Round(10*time.Millisecond))
		}
		return failf(ReasonTimeout, "%s: no answer within the deadline%s", what, budget)
	}
	return failf(ReasonCanceled, "%s: the probe was canceled", what)
}

// encode marshals a request (id set) or a notification (id nil) for any
// conn, and returns its params as sent too: streamable HTTP repeats some of
// them in headers. Nil params are omitted. encoding/json escapes newlines
// inside strings, so the message is one line, as stdio needs.
func encode(id json.RawMessage, method string, params any) (body, rawParams json.RawMessage, err error) {
	if params != nil {
		if rawParams, err = json.Marshal(params); err != nil {
			return nil, nil, failf(ReasonProtocol, "%s: encode params: %v", method, err)
		}
	}
	body, err = json.Marshal(&message{JSONRPC: "2.0", ID: id, Method: method, Params: rawParams})
	if err != nil {
		return nil, nil, failf(ReasonProtocol, "%s: encode the request: %v", method, err)
	}
	return body, rawParams, nil
}

// responseResult turns the response to our request into its result, or
// its error into an *RPCError (with the HTTP status that carried it, 0 off
// HTTP).
func responseResult(msg *message, method string, httpStatus int) (json.RawMessage, error) {
	if msg.Error != nil {
		rpcErr := *msg.Error
		rpcErr.HTTPStatus = httpStatus
		rpcErr.Method = method
		return nil, &rpcErr
	}
	if len(msg.Result) == 0 {
		return nil, failf(ReasonProtocol, "%s: the answer has neither result nor error", method)
	}
	return msg.Result, nil
}

// observer collects what a probe notices besides answers: warnings,
// notifications and, when asked for, a transcript. Conns share it with the
// session; it is safe for concurrent use.
type observer struct {
	start      time.Time
	transcript bool

	mu          sync.Mutex
	warnings    []string
	listChanged int
	entries     []TranscriptEntry
	operations  []Operation
	// onListChanged, when set, hears each notifications/tools/list_changed
	// (a listener's stream).
	onListChanged func()
}

const maxWarnings = 20

// operation keeps a request the probe made, op, that ended with err (nil:
// answered), classified as a probe's failure is; ctx is the request's
// own.
func (o *observer) operation(ctx context.Context, op Operation, err error) {
	if err != nil {
		op.Error, _, _, _ = classify(ctx, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.operations) < MaxOperations {
		o.operations = append(o.operations, op)
	}
}

// warn keeps a warning, once: a repeated one must not crowd out the next.
func (o *observer) warn(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.warnings) >= maxWarnings {
		return
	}
	if w := fmt.Sprintf(format, args...); !slices.Contains(o.warnings, w) {
		o.warnings = append(o.warnings, w)
	}
}

// notification records a notification from the server.
func (o *observer) notification(method string) {
	if method != "notifications/tools/list_changed" {
		return
	}
	o.mu.Lock()
	o.listChanged++
	hear := o.onListChanged
	o.mu.Unlock()
	if hear != nil {
		hear()
	}
}

// record adds a message to the transcript when one is kept. raw is copied
// and truncated so a hostile server cannot grow the transcript unbounded.
func (o *observer) record(direction string, raw []byte, note string) {
	if !o.transcript {
		return
	}
	const maxEntry, maxEntries = 64 << 10, 200
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.entries) >= maxEntries {
		return
	}
	e := TranscriptEntry{At: time.Since(o.start), Direction: direction, Note: note}
	if len(raw) > maxEntry {
		e.Note = fmt.Sprintf("%d bytes, truncated", len(raw))
		raw = raw[:0]
	}
	if len(raw) > 0 && json.Valid(raw) {
		e.Message = append(json.RawMessage(nil), raw...)
	} else if len(raw) > 0 {
		e.Note = fmt.Sprintf("not JSON: %q", sanitize.Truncate(string(raw), 200))
	}
	o.entries = append(o.entries, e)
}

// answerServerRequest builds the reply to a request the server sent us. A
// prober declares no capabilities, so it answers ping and refuses the rest.
// In the modern era it answers nothing (nil), and says so: servers send no
// requests there, and clients no responses.
func answerServerRequest(req *message, era Era, obs *observer) *message {
	if era == EraModern {
		obs.warn("the server sent a %s request, which the modern era does not allow; not answered", sanitize.Truncate(req.Method, 60))
		return nil
	}
	reply := &message{JSONRPC: "2.0", ID: req.ID}
	if req.Method == "ping" {
		reply.Result = json.RawMessage(`{}`)
	} else {
		reply.Error = &RPCError{Code: -32601, Message: "method not found: " + sanitize.Truncate(req.Method, 100)}
	}
	return reply
}

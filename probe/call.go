package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Canary calls: tools/call within the session that listed the tools, under
// the same deadline. The probe makes no call on its own: Options.AfterList
// is handed a Caller once every page of tools/list has been read, and
// decides what to call (the contracts package does, with its safety rules).

// Caller makes tools/call requests on the conn that listed the tools, in
// the era the session settled.
type Caller interface {
	// Call calls tool once with arguments (a JSON object, or nil for none)
	// and always returns a result; ctx bounds it, and may be shorter than
	// the probe's deadline, never longer.
	Call(ctx context.Context, tool string, arguments json.RawMessage) *CallResult
}

// AfterList is called with the listed tools and a Caller once tools/list
// has succeeded. Its calls count in the probe's deadline; an error it
// returns does not fail the probe (the surface was read), it is the hook's
// to record.
type AfterList func(ctx context.Context, tools []Tool, c Caller)

// CallResult is one tools/call as it came back.
type CallResult struct {
	Tool string `json:"tool"`
	// Answered is true when the server answered with a CallToolResult,
	// whatever its isError; false when the call failed on the wire or
	// with a JSON-RPC error (see Reason).
	Answered bool `json:"answered"`
	// Reason is why the call got no result: rpc_error, unauthorized,
	// timeout, protocol, ... (the probe's reasons); empty when Answered.
	Reason     Reason `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"` // one line for people, as a probe's
	HTTPStatus int    `json:"http_status,omitempty"`
	RPCCode    int    `json:"rpc_code,omitempty"`
	RPCMessage string `json:"rpc_message,omitempty"`

	IsError           bool            `json:"is_error,omitempty"`
	Content           json.RawMessage `json:"content,omitempty"`            // the content blocks as sent
	StructuredContent json.RawMessage `json:"structured_content,omitempty"` // absent when the server sent none

	Duration time.Duration `json:"-"` // in JSON: duration_seconds
}

// MarshalJSON writes Duration as duration_seconds, as every duration in
// mcpwatch's JSON is written.
func (r CallResult) MarshalJSON() ([]byte, error) {
	type plain CallResult // without this method
	return json.Marshal(struct {
		plain
		Duration float64 `json:"duration_seconds"`
	}{plain(r), r.Duration.Seconds()})
}

// Text is the text of the result's text content blocks, joined by
// newlines: what an agent reads of it.
func (r *CallResult) Text() string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &blocks) != nil {
		return ""
	}
	var b bytes.Buffer
	for _, blk := range blocks {
		if blk.Type != "text" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(blk.Text)
	}
	return b.String()
}

// Annotations are a tool's behaviour hints (MCP 2025-03-26 and later). A
// hint the server did not send is nil: the spec's defaults (read-only false,
// destructive true) are the reader's to apply.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// ErrNoAnnotations is Hints' error for a tool that sent no annotations.
var ErrNoAnnotations = errors.New("no annotations")

// Hints reads the tool's annotations exactly as the protocol spells them.
// encoding/json would match keys regardless of case and let the last of two
// equal keys win, so {"readOnlyHint": false, "ReadOnlyHint": true} would
// read as read-only: here a key is a hint only when it is spelled exactly
// so ("READONLYHINT" is some other key, ignored), and annotations with a key
// twice, a hint that is not a boolean, or that are not an object are not
// trusted at all: the error says why, and the caller treats the tool as one
// that sent none (not read-only, destructive). ErrNoAnnotations: it sent
// none. A null hint is an absent one.
func (t Tool) Hints() (Annotations, error) {
	if isAbsent(t.Annotations) {
		return Annotations{}, ErrNoAnnotations
	}
	a, err := readHints(t.Annotations)
	if err != nil {
		return Annotations{}, err
	}
	return a, nil
}

// checkHints is the error Hints would return for annotations the tool has,
// nil when it has none.
func (t Tool) checkHints() error {
	if isAbsent(t.Annotations) {
		return nil
	}
	return checkHints(t.Annotations)
}

func readHints(raw json.RawMessage) (Annotations, error) {
	var a Annotations
	if err := scanHints(raw, &a); err != nil {
		return Annotations{}, err
	}
	return a, nil
}

// checkHints is readHints for its error alone, as a probe checks every
// listed tool's annotations: it keeps nothing, and allocates nothing for
// annotations of a few members.
func checkHints(raw json.RawMessage) error { return scanHints(raw, nil) }

// hintKeysScanned is how many members an annotations object's keys are
// told apart by comparing them with each other; past it, by a map.
const hintKeysScanned = 16

// scanHints reads annotations into a, or only checks them when a is nil.
func scanHints(raw json.RawMessage, a *Annotations) error {
	if !json.Valid(raw) {
		return errors.New("not valid JSON")
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return errors.New("not an object")
	}
	var (
		firstKeys [hintKeysScanned][]byte
		keys      = firstKeys[:0]
		seen      map[string]bool // past hintKeysScanned keys
		hints     *[4]bool        // what a's fields point to
		fields    [4]**bool       // a's fields, in the order of the switch below
	)
	if a != nil {
		fields = [4]**bool{&a.ReadOnlyHint, &a.DestructiveHint, &a.IdempotentHint, &a.OpenWorldHint}
	}
	return eachMember(raw, func(k, v []byte) error {
		twice := false
		if seen == nil {
			for _, prev := range keys {
				twice = twice || bytes.Equal(prev, k)
			}
			if len(keys) < hintKeysScanned {
				keys = append(keys, k) // k is raw's bytes or a copy of its own: good past the call
			} else {
				seen = make(map[string]bool, 2*hintKeysScanned)
				for _, prev := range keys {
					seen[string(prev)] = true
				}
			}
		}
		if seen != nil {
			twice = twice || seen[string(k)]
			seen[string(k)] = true
		}
		if twice {
			return fmt.Errorf("the key %q twice", sanitize.Truncate(string(k), 40))
		}
		field := -1
		switch string(k) {
		case "readOnlyHint":
			field = 0
		case "destructiveHint":
			field = 1
		case "idempotentHint":
			field = 2
		case "openWorldHint":
			field = 3
		}
		if field < 0 || isAbsent(v) {
			return nil
		}
		var b bool
		switch string(v) {
		case "true":
			b = true
		case "false":
		default:
			return fmt.Errorf("%s is %s, not a boolean", k, jsonKind(v))
		}
		if a == nil {
			return nil
		}
		if hints == nil {
			hints = new([4]bool)
		}
		hints[field] = b
		*fields[field] = &hints[field]
		return nil
	})
}

// jsonKind names the kind of a JSON value: "a string", "a number", ...
func jsonKind(v json.RawMessage) string {
	switch t := bytes.TrimSpace(v); {
	case len(t) == 0:
		return "empty"
	case t[0] == '"':
		return "a string"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	}
	return "a number"
}

type callParams struct {
	Meta      *requestMeta    `json:"_meta,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// sessionCaller calls on the session's current conn. meta is nil in the
// legacy era.
type sessionCaller struct {
	c    conn
	meta *requestMeta
	obs  *observer
}

// afterList runs the AfterList hook, if any, once the list is complete.
func (s *session) afterList(ctx context.Context, c conn, meta *requestMeta) error {
	if s.opts.AfterList != nil && ctx.Err() == nil {
		s.opts.AfterList(ctx, s.res.Tools, &sessionCaller{c: c, meta: meta, obs: s.obs})
	}
	return nil
}

func (sc *sessionCaller) Call(ctx context.Context, tool string, arguments json.RawMessage) *CallResult {
	out := &CallResult{Tool: tool}
	start := time.Now()
	if isAbsent(arguments) {
		arguments = nil
	}
	raw, err := sc.c.call(ctx, MethodCallTool, callParams{Meta: sc.meta, Name: tool, Arguments: arguments})
	out.Duration = time.Since(start)
	if err == nil {
		err = out.read(raw)
	}
	sc.obs.operation(ctx, Operation{Method: MethodCallTool, Tool: tool, Duration: out.Duration, ToolError: err == nil && out.IsError}, err)
	if err != nil {
		out.Reason, out.HTTPStatus, out.RPCCode, _ = classify(ctx, err)
		if out.HTTPStatus >= 200 && out.HTTPStatus < 300 {
			out.HTTPStatus = 0 // a JSON-RPC error carried by a 200: the code says it all
		}
		var rpcErr *RPCError
		if errors.As(err, &rpcErr) {
			out.RPCMessage = sanitize.Line(rpcErr.Message, 500)
		}
		out.Error = sanitize.OneLine(err.Error())
		out.Answered = false
	}
	return out
}

// read takes a CallToolResult apart.
func (out *CallResult) read(raw json.RawMessage) error {
	var r struct {
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		ResultType        string          `json:"resultType"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return failf(ReasonProtocol, "tools/call %s: the result is not a CallToolResult: %v", sanitize.Truncate(out.Tool, 80), err)
	}
	switch r.ResultType {
	case "", "complete":
	case "input_required":
		return failf(ReasonProtocol, "tools/call %s: the server asked for input (resultType input_required), which a canary call cannot give", sanitize.Truncate(out.Tool, 80))
	default:
		return failf(ReasonProtocol, "tools/call %s: unknown resultType %q", sanitize.Truncate(out.Tool, 80), sanitize.Truncate(r.ResultType, 40))
	}
	if isAbsent(r.Content) {
		r.Content = json.RawMessage("[]")
	}
	out.Answered = true
	out.Content = r.Content
	if !isAbsent(r.StructuredContent) {
		out.StructuredContent = r.StructuredContent
	}
	out.IsError = r.IsError
	return nil
}

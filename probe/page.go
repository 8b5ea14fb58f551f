package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// A tools/list page is decoded in one pass, straight into the result's
// tools: over streamable HTTP from the response body itself (no copy of the
// body, of the JSON-RPC result, or of the tools array on the way), elsewhere
// from the result the conn returned. Tools are counted as they come, so a
// page of a million empty objects costs neither memory nor time.
//
// The reading is jsontext's (the encoding/json v2 tokenizer): one pass over
// the bytes, where encoding/json scans each value twice (once to find its
// end, once to decode it); a tools/list page is most of what a probe
// reads, at every probe of every server.

// pageCaller is a conn that can hand a result's decoder to the caller
// instead of the result's bytes.
type pageCaller interface {
	// callDecode sends one request and runs decode on the decoder when it
	// stands at the start of the response's result. An answer that is a
	// JSON-RPC error is an *RPCError, as from call.
	callDecode(ctx context.Context, method string, params any, decode func(*jsontext.Decoder) error) error
}

// page is what a tools/list page says besides its tools.
type page struct {
	next       *string // nil at the end
	ttl        json.RawMessage
	resultType json.RawMessage
	meta       json.RawMessage
}

// callPage asks for one page of tools/list and adds its tools to the
// result, in one pass where the conn can.
func (s *session) callPage(ctx context.Context, c conn, params listParams, modern bool, names map[string]bool) (page, error) {
	var p page
	decode := func(dec *jsontext.Decoder) error {
		var err error
		p, err = s.decodePage(dec, modern, names)
		return err
	}
	if pc, ok := c.(pageCaller); ok {
		err := pc.callDecode(ctx, MethodListTools, params, decode)
		return p, err
	}
	raw, err := c.call(ctx, MethodListTools, params)
	if err != nil {
		return p, err
	}
	err = decode(newDecoder(bytes.NewReader(raw)))
	return p, err
}

// newDecoder reads JSON as encoding/json reads it: a member's name twice
// and invalid UTF-8 are the probe's to judge (a tool's annotations sent
// twice, say), not a syntax error.
func newDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, decoderOptions...)
}

var decoderOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// decoders keeps the decoders of finished pages, with their buffers: a
// page's decoder grows its buffer to the largest value it read, at every
// probe of every server, where a reused one has room already.
var decoders sync.Pool

// pooledBufferMax is the most a pooled decoder may have read: one that
// read a page larger than most (up to the message cap) is let go rather
// than kept with its buffer.
const pooledBufferMax = 256 << 10

// noInput is what a decoder reads while it waits in the pool: nothing,
// and no body of a finished response.
var noInput = bytes.NewReader(nil)

func getDecoder(r io.Reader) *jsontext.Decoder {
	if d, ok := decoders.Get().(*jsontext.Decoder); ok {
		d.Reset(r, decoderOptions...)
		return d
	}
	return newDecoder(r)
}

func putDecoder(d *jsontext.Decoder) {
	if d.InputOffset() > pooledBufferMax {
		return
	}
	d.Reset(noInput)
	decoders.Put(d)
}

// readRaw reads the next value and returns a copy of its bytes: the
// decoder's own are only good until its next read.
func readRaw(dec *jsontext.Decoder) (json.RawMessage, error) {
	v, err := dec.ReadValue()
	return json.RawMessage(bytes.Clone(v)), err
}

// decodePage reads one tools/list result object from dec: its tools go
// into the result as they are decoded, the rest is returned.
func (s *session) decodePage(dec *jsontext.Decoder, modern bool, names map[string]bool) (page, error) {
	var p page
	if open, err := dec.ReadToken(); err != nil || open.Kind() != '{' {
		return p, pageError(err, "tools/list: the result is not an object")
	}
	var cursor json.RawMessage
	sawTools := false
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return p, pageError(err, "tools/list: the result is not an object")
		}
		var dst *json.RawMessage
		switch key.String() {
		case "tools":
			if sawTools {
				return p, failf(ReasonProtocol, "tools/list: the result has two tools arrays")
			}
			sawTools = true
			if err := s.decodeTools(dec, names); err != nil {
				return p, err
			}
			continue
		case "nextCursor":
			dst = &cursor
		case "ttlMs":
			dst = &p.ttl
		case "resultType":
			dst = &p.resultType
		case "_meta":
			dst = &p.meta
		default:
			err = dec.SkipValue()
		}
		if dst != nil {
			*dst, err = readRaw(dec)
		}
		if err != nil {
			return p, pageError(err, "tools/list: the result is not an object")
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return p, pageError(err, "tools/list: the result is not an object")
	}
	if !sawTools {
		return p, failf(ReasonProtocol, "tools/list: the result has no tools array")
	}
	if isAbsent(cursor) {
		return p, nil
	}
	var next string
	if err := json.Unmarshal(cursor, &next); err != nil {
		return p, failf(ReasonProtocol, "tools/list: nextCursor is not a string")
	}
	if next == "" && !modern {
		// Legacy servers use an empty cursor for "no more"; in the modern
		// era only its absence means that.
		return p, nil
	}
	p.next = &next
	return p, nil
}

// decodeTools appends one page's tools to the result, one at a time and
// counted as they come. names are the names seen so far.
func (s *session) decodeTools(dec *jsontext.Decoder, names map[string]bool) error {
	if open, err := dec.ReadToken(); err != nil || open.Kind() != '[' {
		return pageError(err, "tools/list: the result has no tools array")
	}
	var lt listedTool
	for dec.PeekKind() != ']' {
		if len(s.res.Tools) >= s.opts.MaxTools {
			return failf(ReasonTooLarge, "tools/list: the server lists more than %d tools, the probe's cap on the tools of one server", s.opts.MaxTools)
		}
		v, err := dec.ReadValue()
		if err == nil {
			lt = listedTool{}
			err = lt.UnmarshalJSON(v) // v is valid JSON, as UnmarshalJSON needs; its members are copied out
		}
		if err != nil {
			return pageError(err, fmt.Sprintf("tools/list: a tool is malformed: %v", err))
		}
		t := lt.Tool
		switch {
		case t.Name == "":
			s.obs.warn("tools/list: a tool has no name")
		case names[t.Name]:
			s.obs.warn("tools/list: tool %q is listed more than once", sanitize.Truncate(t.Name, 80))
		}
		if slices.Contains(lt.twice, "annotations") {
			s.obs.warn("tools/list: tool %q sends annotations twice: neither is trusted, it is treated as unannotated, so not read-only", sanitize.Truncate(t.Name, 80))
		} else if len(lt.twice) > 0 {
			s.obs.warn("tools/list: tool %q sends %s twice: the last is kept", sanitize.Truncate(t.Name, 80), strings.Join(lt.twice, ", "))
		}
		if err := t.checkHints(); err != nil {
			s.obs.warn("tools/list: tool %q sends annotations mcpwatch does not trust (%v): it is treated as unannotated, so not read-only", sanitize.Truncate(t.Name, 80), err)
		}
		names[t.Name] = true
		s.listBytes += t.size()
		if s.listBytes > s.opts.MaxListBytes {
			return failf(ReasonTooLarge, "tools/list: the tools listed so far take more than %d bytes, the probe's cap on the list of one server", s.opts.MaxListBytes)
		}
		s.res.Tools = append(s.res.Tools, t)
	}
	if _, err := dec.ReadToken(); err != nil {
		return pageError(err, "tools/list: the tools array is malformed")
	}
	return nil
}

// pageError passes on a failure of the wire under the decoder (a body over
// its cap, a connection lost mid-body); anything else is the message's
// fault.
func pageError(err error, msg string) error {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return failf(ReasonProtocol, "%s", msg)
}

// callDecode implements pageCaller: a JSON body is decoded as it is read,
// the result handed to decode on the way; an event stream's response, as
// call reads it. With a transcript, everything goes through call, which
// keeps the bytes.
func (c *httpConn) callDecode(ctx context.Context, method string, params any, decode func(*jsontext.Decoder) error) error {
	if c.obs.transcript {
		raw, err := c.call(ctx, method, params)
		if err != nil {
			return err
		}
		return decode(newDecoder(bytes.NewReader(raw)))
	}
	id, resp, modern, err := c.send(ctx, method, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	what := method + " to " + c.where
	mt, err := c.checkResponse(resp, method, what)
	if err != nil {
		return err
	}
	if isEventStream(mt) {
		var raw json.RawMessage
		msg, err := c.readStream(ctx, resp.Body, id, what, modern)
		if err == nil {
			raw, err = responseResult(msg, method, resp.StatusCode)
		}
		// A modern stream that dropped is sent again, as call does.
		if raw, err = c.resend(ctx, method, params, raw, err, 1); err != nil {
			return err
		}
		return decode(newDecoder(bytes.NewReader(raw)))
	}
	if resp.ContentLength > c.maxBytes {
		return &Failure{Reason: ReasonTooLarge, Err: fmt.Errorf("%s: the body is %d bytes, over the cap of %d", what, resp.ContentLength, c.maxBytes)}
	}
	body := &cappedBody{ctx: ctx, r: resp.Body, max: c.maxBytes, left: c.maxBytes, what: what}
	dec := getDecoder(body)
	defer putDecoder(dec)
	err = decodeResponse(dec, id, what, resp.StatusCode, method, decode)
	if err == nil {
		// The rest of the body (white space, as a rule) is read so the
		// connection goes back to the pool.
		_, err = io.Copy(io.Discard, body)
		if err != nil {
			return err
		}
	}
	return err
}

// decodeResponse reads one JSON-RPC response as every transport does
// (readMessage), handing its result to decode, and checks it as readJSON
// and responseResult do: not a request, our id, a result or an error.
func decodeResponse(dec *jsontext.Decoder, id json.RawMessage, what string, status int, method string, decode func(*jsontext.Decoder) error) error {
	var m message
	hasResult := false
	err := readMessage(dec, &m, func(dec *jsontext.Decoder) error {
		hasResult = true
		return decode(dec)
	})
	switch {
	case err != nil:
		// A failure of the body or of the result comes as it is.
		return pageError(err, fmt.Sprintf("%s: %v", what, err))
	case m.Method != "":
		return failf(ReasonProtocol, "%s: the body is a %s message, not the response", what, sanitize.Truncate(m.Method, 60))
	case !sameID(m.ID, id):
		return wrongID(what, m.ID, id)
	case m.Error != nil:
		e := *m.Error
		e.HTTPStatus = status
		e.Method = method
		return &e
	case !hasResult:
		return failf(ReasonProtocol, "%s: the answer has neither result nor error", method)
	}
	return nil
}

// cappedBody reads a response body of at most left bytes; past that it
// fails too_large, and a read error is the transport's.
type cappedBody struct {
	ctx       context.Context
	r         io.Reader
	max, left int64
	what      string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, httpTransportError(b.ctx, err, b.what)
	}
	return n, err
}

var _ pageCaller = (*httpConn)(nil)

func (b *cappedBody) tooLarge() error {
	return &Failure{Reason: ReasonTooLarge, Err: fmt.Errorf("%s: the body is over the cap of %d bytes", b.what, b.max)}
}

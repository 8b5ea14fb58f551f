package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON-RPC envelope is read one way on every transport: a streamable
// HTTP body as it arrives, an event's data, a line of stdio. One reader
// decides what a message is, so that no transport can read a message
// another refuses, or read it differently.
//
// A member of the envelope sent twice is refused: {"id":1,"result":A,
// "result":B} is A to a parser that keeps the first and B to one that keeps
// the last, so whatever is read from it, a client beside mcpwatch may read
// the other.

// envelopeMembers are the members of a JSON-RPC message that a reader acts
// on; others are skipped, and may repeat.
var envelopeMembers = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// errBatch: no revision a probe speaks lets a server answer one request
// with a batch.
var errBatch = errors.New("a JSON-RPC batch, where one message was expected")

// duplicateMember is a message with one of envelopeMembers twice.
type duplicateMember struct{ name string }

func (e *duplicateMember) Error() string {
	return fmt.Sprintf("duplicate member %q in a JSON-RPC message: parsers differ on which one counts, so neither is read", e.name)
}

// readMessage reads the one JSON-RPC message dec holds into m: an object,
// and nothing after it but white space. When result is not nil, it reads
// the result where it stands, instead of m keeping a copy of its bytes; it
// is not called for a result that follows an error or a method, which make
// the message no result.
//
// A failure of the input under dec, or of result, comes back as it is.
// Else an error says why the input is no message: a batch, not JSON, a
// duplicateMember, or none of method, id and error.
func readMessage(dec *jsontext.Decoder, m *message, result func(*jsontext.Decoder) error) error {
	open, err := dec.ReadToken()
	switch {
	case err != nil:
		return notMessage(err)
	case open.Kind() == '[':
		return errBatch
	case open.Kind() != '{':
		return notMessage(errors.New("not an object"))
	}
	var seen [len(envelopeMembers)]bool
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return notMessage(err)
		}
		// The name is the decoder's bytes, not a copy, as long as it goes
		// nowhere: the error names the member by its constant.
		name := key.String()
		if i := memberIndex(name); i >= 0 {
			if seen[i] {
				return &duplicateMember{name: envelopeMembers[i]}
			}
			seen[i] = true
		}
		switch name {
		case "jsonrpc":
			m.JSONRPC, err = readVersion(dec)
		case "id":
			m.ID, err = readRaw(dec)
		case "method":
			m.Method, err = readString(dec)
		case "params":
			m.Params, err = readRaw(dec)
		case "error":
			m.Error, err = readError(dec)
		case "result":
			switch {
			case result == nil:
				m.Result, err = readRaw(dec)
			case m.Error != nil || m.Method != "":
				err = dec.SkipValue()
			default:
				if err := result(dec); err != nil {
					// The decoder stands somewhere inside the result:
					// the rest of the message cannot be read, and the
					// result's fault is the answer.
					return err
				}
			}
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return notMessage(err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return notMessage(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more after the message")
		}
		return notMessage(err)
	}
	if m.Method == "" && len(m.ID) == 0 && m.Error == nil {
		return errors.New("not a JSON-RPC message: no method, id or error")
	}
	return nil
}

// parseMessage reads one whole message: an HTTP body, an event's data, a
// line of stdio.
func parseMessage(raw []byte) (*message, error) {
	dec := getDecoder(bytes.NewReader(raw))
	defer putDecoder(dec)
	var m message
	if err := readMessage(dec, &m, nil); err != nil {
		return nil, err
	}
	return &m, nil
}

func memberIndex(name string) int {
	for i, n := range envelopeMembers {
		if n == name {
			return i
		}
	}
	return -1
}

// notMessage passes on a failure of the input (a body over its cap, a
// connection lost mid-body); anything else means the input is no message.
func notMessage(err error) error {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return fmt.Errorf("not a JSON-RPC message: %w", err)
}

// readString reads a string member; null reads as "".
func readString(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return "", err
	case tok.Kind() == 'n':
		return "", nil
	case tok.Kind() != '"':
		return "", errors.New("a member that must be a string is not")
	}
	return tok.String(), nil
}

// readError reads the error member; null reads as no error. Its own
// variable, not the message's field, is what json.Unmarshal gets, so that
// a message without an error is not moved to the heap for it.
func readError(dec *jsontext.Decoder) (*RPCError, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	var e *RPCError
	err = json.Unmarshal(v, &e)
	return e, err
}

// readVersion reads the jsonrpc member, a string: "2.0", as every message
// says, costs no copy.
func readVersion(dec *jsontext.Decoder) (string, error) {
	v, err := dec.ReadValue()
	switch {
	case err != nil:
		return "", err
	case string(v) == `"2.0"`:
		return "2.0", nil
	case v.Kind() == 'n':
		return "", nil
	case v.Kind() != '"':
		return "", errors.New("jsonrpc is not a string")
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return string(u), err
}

// sameID is the one rule for whether a response answers a request: its id
// is the same JSON text as the request's, so 3 and "3" differ, and so do
// 3 and 3.0.
func sameID(a, b json.RawMessage) bool {
	return bytes.Equal(idKey(a), idKey(b))
}

// idKey is an id as sameID compares it, for the maps of requests waiting
// for their answers.
func idKey(id json.RawMessage) []byte { return bytes.TrimSpace(id) }

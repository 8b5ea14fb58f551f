package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Fuzz targets for what a hostile server's bytes go through first: the
// event-stream reader (legacy SSE and streamable HTTP's streamed answers),
// stdio's line framing and its dispatch of a line, and the one-pass
// decoding of a tools/list response. Each checks properties, not only
// that nothing panics: bounds on what is kept, the same answer however the
// bytes are chunked, round trips, and errors of the probe's own kinds.
// make fuzz runs each for a while; go test runs the seeds.

// readEvents reads every event of stream with cap max.
func readEvents(r io.Reader, max int64) ([]sseEvent, error) {
	events := newSSEReader(r, max)
	var out []sseEvent
	for {
		ev, err := events.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		": hello\n\n\nevent: endpoint\ndata: /messages?s=1\n\nid: 7\ndata: {}\n\n",
		"data:a\ndata:  b\ndata\n\n",
		"data: a\r\n\r\ndata: b\r\rdata: c\r\n\n",
		"id: 0\ndata:\n\ndata: x\n\n",
		"retry: 10\nfoo: bar\n\ndata: x\nfoo: bar\n\n",
		"data: x\n\ndata: cut",
		"data: x\n\ndata: " + strings.Repeat("z", 300) + "\n\n",
		"id: a\x00b\ndata: x\n\n",
		"\r\n\r\r\n\n\r",
		"data: \xff\xfe\n\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
	} {
		f.Add([]byte(s), uint16(100))
		f.Add([]byte(s), uint16(4))
	}
	f.Fuzz(func(t *testing.T, stream []byte, capSeed uint16) {
		max := 1 + int64(capSeed%512)
		whole, wholeErr := readEvents(bytes.NewReader(stream), max)
		for _, ev := range whole {
			if int64(len(ev.Data)) > max {
				t.Fatalf("an event of %d data bytes, over the cap of %d", len(ev.Data), max)
			}
			if strings.IndexByte(ev.ID, 0) >= 0 {
				t.Fatalf("an id with NUL: %q", ev.ID)
			}
			if strings.ContainsAny(ev.Event+ev.ID, "\r\n") {
				t.Fatalf("a line ending inside a field: %+v", ev)
			}
		}
		// Each event takes at least its field's line and a blank line.
		if len(whole) > len(stream)/2+1 {
			t.Fatalf("%d events from %d bytes", len(whole), len(stream))
		}
		switch {
		case errors.Is(wholeErr, io.EOF):
		case errors.Is(wholeErr, errSSETooLarge):
			var fail *Failure
			if !errors.As(wholeErr, &fail) || fail.Reason != ReasonTooLarge {
				t.Fatalf("too large, but not a too_large failure: %v", wholeErr)
			}
		default:
			t.Fatalf("error %v: a stream in memory fails only by size", wholeErr)
		}
		// A live stream arrives in pieces: one byte at a time, or in odd
		// halves, it reads the same.
		for name, r := range map[string]io.Reader{
			"one byte at a time": iotest.OneByteReader(bytes.NewReader(stream)),
			"halves":             iotest.HalfReader(bytes.NewReader(stream)),
		} {
			got, err := readEvents(r, max)
			if !sameEvents(got, whole) || errors.Is(err, io.EOF) != errors.Is(wholeErr, io.EOF) {
				t.Fatalf("%s: %+v, %v; read whole: %+v, %v", name, got, err, whole, wholeErr)
			}
		}
	})
}

func sameEvents(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzSSERoundTrip: an event written as the format says, with any line
// ending and comments between its lines, reads back as itself.
func FuzzSSERoundTrip(f *testing.F) {
	f.Add("endpoint", "/messages?sessionId=1", "7", byte(0))
	f.Add("", "{\"jsonrpc\":\"2.0\"}\nsecond line", "", byte(1))
	f.Add("message", " leading space", "a\x00b", byte(2))
	f.Add("", "", "0", byte(3))
	f.Fuzz(func(t *testing.T, event, data, id string, style byte) {
		if strings.ContainsAny(event+id, "\r\n") || strings.Contains(data, "\r") {
			t.Skip("a field cannot hold a line ending; data lines are split on \\n")
		}
		eol := []string{"\n", "\r\n", "\r"}[style%3]
		var b strings.Builder
		if style&4 != 0 {
			b.WriteString(": keep-alive" + eol + eol)
		}
		if event != "" {
			b.WriteString("event: " + event + eol)
		}
		b.WriteString("id: " + id + eol)
		for _, line := range strings.Split(data, "\n") {
			b.WriteString("data: " + line + eol)
			if style&8 != 0 {
				b.WriteString(":comment" + eol)
			}
		}
		b.WriteString(eol)
		// The cap bounds data and every line (with 64 bytes of room for a
		// field name): room enough for this event.
		events, err := readEvents(strings.NewReader(b.String()), int64(len(data)+len(event)+len(id))+1)
		want := sseEvent{Event: event, Data: data, ID: id}
		if strings.IndexByte(id, 0) >= 0 {
			want.ID = "" // the format says to ignore such an id
		}
		if !errors.Is(err, io.EOF) || len(events) != 1 || events[0] != want {
			t.Fatalf("%q read as %+v, %v; want %+v", b.String(), events, err, want)
		}
	})
}

// FuzzReadBoundedLine: stdio's framing gives back the lines of the stream
// (line endings trimmed), none over the cap, and fails too large only for a
// line that is.
func FuzzReadBoundedLine(f *testing.F) {
	for _, s := range []string{"a\nbb\n", "a\r\nb\r\n", "a\nlast", "abcd\n", "ok\nabcde\n", "abcde",
		strings.Repeat("x", 100) + "\n", strings.Repeat("x", 1000) + "\n", "\n\n\r\n", "x\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\r\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"} {
		f.Add([]byte(s), uint8(4))
		f.Add([]byte(s), uint8(100))
	}
	f.Fuzz(func(t *testing.T, stream []byte, capSeed uint8) {
		max := int64(capSeed)
		r := bufio.NewReaderSize(bytes.NewReader(stream), 16) // small: lines cross buffers
		want := strings.Split(string(stream), "\n")
		if want[len(want)-1] == "" {
			want = want[:len(want)-1] // the stream ended with its last newline
		}
		var buf []byte
		for i := 0; ; i++ {
			line, err := readBoundedLine(r, max, buf)
			switch {
			case errors.Is(err, io.EOF):
				if i != len(want) {
					t.Fatalf("end after %d lines, want %d", i, len(want))
				}
				return
			case errors.Is(err, errLineTooLarge):
				if i >= len(want) || int64(len(want[i])) <= max {
					t.Fatalf("line %d too large, but it is %q (cap %d)", i, want[i], max)
				}
				return
			case err != nil:
				t.Fatalf("line %d: %v", i, err)
			}
			if i >= len(want) {
				t.Fatalf("line %d %q after the last one", i, line)
			}
			if int64(len(line)) > max {
				t.Fatalf("line %d is %d bytes, over the cap of %d", i, len(line), max)
			}
			if got, exp := string(line), strings.TrimRight(want[i], "\r"); got != exp {
				t.Fatalf("line %d = %q, want %q", i, got, exp)
			}
			buf = line
		}
	})
}

// FuzzHandleLine: whatever one line of a server's stdout holds, the conn
// answers it, skips it with a bounded warning, or stops with a protocol
// failure; a call waiting for id 1 gets its answer when the line is one.
func FuzzHandleLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`server starting on port 3000`,
		`{"id":1e400,"result":{}}`,
		"  \t",
		`{"jsonrpc":"2.0","id":-1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[{"name":"b"}]}}`,
		`{"jsonrpc":"2.0","id":2,"id":1,"result":{}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { devNull.Close() })
	f.Fuzz(func(t *testing.T, line []byte, modern bool) {
		obs := &observer{transcript: true}
		c := &stdioConn{stdin: devNull, lastID: 1, pending: map[string]chan *message{}, abandoned: map[string]bool{}}
		c.observed.Store(obs)
		if modern {
			c.era = EraModern
		}
		answer := make(chan *message, 1)
		c.pending["1"] = answer
		fail := c.handleLine(line)
		if fail != nil && fail.Reason != ReasonProtocol {
			t.Fatalf("a line stops the conn with %s, not protocol: %v", fail.Reason, fail)
		}
		select {
		case m := <-answer:
			if !m.isResponse() || strings.TrimSpace(string(m.ID)) != "1" {
				t.Fatalf("the call for id 1 got %+v", m)
			}
			if _, waiting := c.pending["1"]; waiting {
				t.Fatal("answered, but still pending")
			}
		default:
		}
		for _, w := range obs.warnings {
			if len(w) > 600 || !utf8.ValidString(w) {
				t.Fatalf("a warning of %d bytes: %q", len(w), w)
			}
		}
		// A note quotes at most 200 bytes of the line, each escaped in at
		// most 4 characters ("\x1b").
		for _, e := range obs.entries {
			if len(e.Message) > 64<<10 || len(e.Note) > 4*200+64 || len(e.Message) > 0 && !json.Valid(e.Message) {
				t.Fatalf("a transcript entry out of bounds: %d-byte message, note %q", len(e.Message), e.Note)
			}
		}
	})
}

// FuzzDecodePage: a tools/list response decoded in one pass never holds
// more tools than the cap, accepts only a body that is one valid JSON
// value, and fails only with the probe's own errors.
func FuzzDecodePage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{},{},{}]},"result":{"tools":[{"name":"b"}]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"a"}],"ttlMs":5,"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"tools":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"nextCursor":""}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}} trailing`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","annotations":{"readOnlyHint":false},"ANNOTATIONS":{"readOnlyHint":true}},{"name":"b","annotations":{},"annotations":{"readOnlyHint":true}},null,{"NAME":"c","name":"d"}]}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	const maxTools = 5
	f.Fuzz(func(t *testing.T, body []byte, modern bool) {
		s := &session{opts: Options{MaxTools: maxTools}, obs: &observer{}, res: &Result{}}
		decode := func(dec *jsontext.Decoder) error {
			_, err := s.decodePage(dec, modern, map[string]bool{})
			return err
		}
		err := decodeResponse(newDecoder(bytes.NewReader(body)), json.RawMessage("1"), "tools/list to test", 200, "tools/list", decode)
		if len(s.res.Tools) > maxTools {
			t.Fatalf("%d tools, over the cap of %d", len(s.res.Tools), maxTools)
		}
		for _, tool := range s.res.Tools {
			for _, raw := range []json.RawMessage{tool.InputSchema, tool.OutputSchema, tool.Annotations} {
				if len(raw) > 0 && !json.Valid(raw) {
					t.Fatalf("a tool kept invalid JSON: %q", raw)
				}
			}
		}
		if err == nil {
			if !json.Valid(body) {
				t.Fatalf("accepted a body that is not one JSON value: %q", body)
			}
			return
		}
		var fail *Failure
		var rpc *RPCError
		switch {
		case errors.As(err, &rpc):
		case errors.As(err, &fail) && (fail.Reason == ReasonProtocol || fail.Reason == ReasonTooLarge):
		default:
			t.Fatalf("error %T %v: not the probe's own", err, err)
		}
	})
}

package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Fuzz targets for the reader of client config files, which hold tokens:
// whatever a file holds, stripping keeps every offset, blanks only
// comments and trailing commas, leaves strict JSON alone, and an error
// places the problem without quoting the file. make fuzz runs each for a
// while; go test runs the seeds.

// fuzzSecret is in the seeds: no error may quote it.
const fuzzSecret = "zq7x-secret"

var jsoncSeeds = []string{
	`{"a": "http://x//y", "b": "/* not a comment */"}`,
	"{\"a\": 1, // comment\n}",
	`{"a": [1, 2,], /* c */ "b": "x\"//",}`,
	"{\"a\": 1, /* c */ }",
	`{"mcpServers": {"s": {"command": "npx", "env": {"TOKEN": "` + fuzzSecret + `"}}}}`,
	`{"mcpServers": {"s": {"env": {"TOKEN": ` + fuzzSecret + `}}}}`,
	`{"mcpServers": {"s": {"env": {"TOKEN": "` + fuzzSecret + `"},}},}`,
	"// " + fuzzSecret + "\n{}",
	`{"a": 1 /* unterminated`,
	`{"a": "unterminated \" string`,
	`{"` + fuzzSecret + `": }`,
	`[1, 2, 3]`,
	"",
	"/* only a comment */",
	`{"a": "\u00e9\\"}`,
	"{\"a\":\n\n 'single quoted " + fuzzSecret + "'}",
	`{"a": 1,,}`,
	`{"a": [,]}`,
}

func FuzzStrip(f *testing.F) {
	for _, s := range jsoncSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		clean, extras := strip(data)
		if len(clean) != len(data) {
			t.Fatalf("%d bytes stripped to %d: offsets in errors would be wrong", len(data), len(clean))
		}
		for i := range data {
			if clean[i] != data[i] && (clean[i] != ' ' || data[i] == '\n') {
				t.Fatalf("byte %d: %q became %q; only comments and commas are blanked, line breaks kept", i, data[i], clean[i])
			}
		}
		last := -1
		for _, x := range extras {
			if x.Offset <= last || x.Offset >= len(data) {
				t.Fatalf("extras out of order or range: %+v", extras)
			}
			last = x.Offset
			switch {
			case x.Comment && data[x.Offset] != '/':
				t.Fatalf("a comment at %d starts with %q", x.Offset, data[x.Offset])
			case !x.Comment && (data[x.Offset] != ',' || x.Closer != '}' && x.Closer != ']'):
				t.Fatalf("a trailing comma at %d is %q before %q", x.Offset, data[x.Offset], x.Closer)
			}
		}
		if json.Valid(data) && (!bytes.Equal(clean, data) || len(extras) > 0) {
			t.Fatalf("strict JSON changed: %q -> %q, %+v", data, clean, extras)
		}
		// Once stripped to JSON, nothing is left to strip ("[1,,]" is not
		// JSON either way, and stripping it leaves a comma to strip).
		if again, more := strip(clean); json.Valid(clean) && (!bytes.Equal(again, clean) || len(more) > 0) {
			t.Fatalf("stripping twice changed it again: %q -> %q, %+v", clean, again, more)
		}
	})
}

// FuzzDecode: a file parses strictly exactly when it is JSON; leniently
// when it is JSON once stripped; every error is placed in the file and
// quotes nothing of it.
func FuzzDecode(f *testing.F) {
	for _, s := range jsoncSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		clean, extras := strip(data)
		empty := len(bytes.TrimSpace(clean)) == 0
		for _, strict := range []bool{true, false} {
			// Into raw JSON, any JSON is accepted (a number too large for
			// a float64 is JSON, but no value of Go).
			var raw json.RawMessage
			err := Decode("client.json", data, strict, &raw)
			switch {
			case err == nil && strict && (!json.Valid(data) || len(extras) > 0):
				t.Fatalf("strict: accepted %q, which is not JSON", data)
			case err == nil && !json.Valid(clean):
				t.Fatalf("accepted %q, which is not JSON once stripped", data)
			case err != nil && strict && json.Valid(data) && !empty:
				t.Fatalf("strict: refused JSON %q: %v", data, err)
			case err != nil && !strict && json.Valid(clean) && !empty:
				t.Fatalf("refused %q, which is JSON once stripped: %v", data, err)
			}
			// As a client config is read: an object, or a placed error.
			_, err = Object("client.json", data, strict)
			checkError(t, data, err, empty)
		}
	})
}

// checkError: err is nil, ErrEmpty for an empty file, or errors placed in
// the file that quote nothing of it.
func checkError(t *testing.T, data []byte, err error, empty bool) {
	t.Helper()
	switch {
	case err == nil:
		return
	case errors.Is(err, ErrEmpty):
		if !empty {
			t.Fatalf("ErrEmpty for %q", data)
		}
		return
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, e := range unwrapAll(err) {
		var je *Error
		if !errors.As(e, &je) {
			t.Fatalf("error %T %v: not a placed *Error", e, e)
		}
		if je.Line < 0 || je.Line > lines || je.Line > 0 && je.Col < 1 {
			t.Fatalf("error placed at %d:%d in a file of %d lines: %v", je.Line, je.Col, lines, je)
		}
	}
	if strings.Contains(err.Error(), fuzzSecret) {
		t.Fatalf("the error quotes the file: %v", err)
	}
}

// unwrapAll flattens errors.Join.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	return []error{err}
}

// FuzzLineCol: every offset encoding/json may report lands in the file.
func FuzzLineCol(f *testing.F) {
	f.Add([]byte("{\n\"a\": x\n}"), int64(9))
	f.Add([]byte(""), int64(0))
	f.Add([]byte("\n\n\n"), int64(-5))
	f.Add([]byte("abc"), int64(1<<40))
	f.Fuzz(func(t *testing.T, data []byte, offset int64) {
		line, col := lineCol(data, offset)
		if line < 1 || line > bytes.Count(data, []byte("\n"))+1 || col < 1 || col > len(data)+1 {
			t.Fatalf("lineCol(%d bytes, %d) = %d:%d", len(data), offset, line, col)
		}
	})
}

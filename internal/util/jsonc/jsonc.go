// Package jsonc reads the JSON files MCP clients write: strict JSON (Claude
// Code, Claude Desktop), or JSON with comments and trailing commas (VS Code,
// Cursor, Gemini CLI). Its errors place a problem at FILE:LINE:COL and never
// quote the file's content: a client config holds tokens.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is a syntax problem in a file, at Line and Col (1-based; 0 when the
// problem is the whole file).
type Error struct {
	File      string
	Line, Col int
	Problem   string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Problem)
	}
	return e.File + ": " + e.Problem
}

// Object parses data as a JSON object. With strict, each comment and
// trailing comma is an error of its own (joined); without, they are ignored.
// An empty file is an error the caller words (ErrEmpty).
func Object(file string, data []byte, strict bool) (map[string]any, error) {
	var top map[string]any
	if err := Decode(file, data, strict, &top); err != nil {
		return nil, err
	}
	return top, nil
}

// Decode is Object into any value encoding/json can fill: a struct with
// only the fields wanted skips the rest of a large file without building it.
func Decode(file string, data []byte, strict bool, v any) error {
	clean, extras := strip(data)
	if len(bytes.TrimSpace(clean)) == 0 {
		return ErrEmpty
	}
	if err := json.Unmarshal(clean, v); err != nil {
		return syntaxError(file, err, data)
	}
	if strict && len(extras) > 0 {
		var errs []error
		for _, x := range extras {
			line, col := lineCol(data, int64(x.Offset)+1)
			errs = append(errs, &Error{File: file, Line: line, Col: col, Problem: x.Problem()})
		}
		return errors.Join(errs...)
	}
	return nil
}

// ErrEmpty is Object's error for a file with nothing but spaces and comments.
var ErrEmpty = errors.New("empty JSON file")

// extra is a comment or a trailing comma: JSON with comments has them,
// strict JSON does not.
type extra struct {
	Offset  int // of its first byte
	Comment bool
	Closer  byte // for a trailing comma: the } or ] after it
}

// Problem says what is wrong with x in a strict JSON file.
func (x extra) Problem() string {
	if x.Comment {
		return "a comment, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove it"
	}
	return fmt.Sprintf("a trailing comma before %c, which strict JSON does not allow (Claude Code and Claude Desktop reject the file); remove the comma", x.Closer)
}

// strip blanks out comments and trailing commas (VS Code writes both) with
// spaces, so byte offsets in a syntax error still match the file, and lists
// where they were.
func strip(data []byte) ([]byte, []extra) {
	var extras []extra
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			extras = append(extras, extra{Offset: i, Comment: true})
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			extras = append(extras, extra{Offset: i, Comment: true})
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		case c == ',':
			if closer := nextCloser(out[i+1:]); closer != 0 {
				extras = append(extras, extra{Offset: i, Closer: closer})
				out[i] = ' '
			}
		}
	}
	return out, extras
}

// nextCloser returns the next token, skipping spaces and comments, when it
// is "}" or "]"; else 0.
func nextCloser(b []byte) byte {
	for len(b) > 0 {
		switch {
		case isSpace(b[0]):
			b = b[1:]
		case bytes.HasPrefix(b, []byte("//")):
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				return 0
			}
			b = b[nl:]
		case bytes.HasPrefix(b, []byte("/*")):
			end := bytes.Index(b[2:], []byte("*/"))
			if end < 0 {
				return 0
			}
			b = b[2+end+2:]
		case b[0] == '}' || b[0] == ']':
			return b[0]
		default:
			return 0
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// syntaxError places a JSON error at FILE:LINE:COL, and never quotes the
// file's content.
func syntaxError(file string, err error, data []byte) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return &Error{File: file, Line: line, Col: col, Problem: "not valid JSON: " + syntaxProblem(syn)}
	case errors.As(err, &typ) && typ.Field == "":
		return &Error{File: file, Problem: "the top level must be a JSON object such as {\"mcpServers\": {...}}"}
	case errors.As(err, &typ):
		return &Error{File: file, Problem: fmt.Sprintf("%s: expected %s, got a JSON %s", typ.Field, kindName(typ.Type.Kind().String()), typ.Value)}
	}
	return &Error{File: file, Problem: "not valid JSON"}
}

// syntaxProblem keeps the kind of a JSON syntax error and drops the
// character it quotes.
func syntaxProblem(e *json.SyntaxError) string {
	msg := e.Error()
	rest, ok := strings.CutPrefix(msg, "invalid character '")
	if !ok {
		return msg
	}
	if i := strings.Index(rest[1:], "' "); i >= 0 {
		return "invalid character " + rest[1+i+2:]
	}
	return "invalid character"
}

// lineCol turns the offset encoding/json reports (the count of bytes read,
// the offending one included) into a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	offset--
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	line = 1 + bytes.Count(data[:offset], []byte("\n"))
	col = int(offset) - bytes.LastIndexByte(data[:offset], '\n')
	return line, col
}

// kindName says a Go kind as a JSON reader would.
func kindName(kind string) string {
	switch kind {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return kind
}

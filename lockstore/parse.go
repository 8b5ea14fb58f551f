package lockstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// ParseError is a lock file that cannot be used: where, what, and what to do.
type ParseError struct {
	File         string // the lock file; "" when parsed from bytes
	Line, Column int    // 1-based; the column counts characters
	Server       string // the server whose entry is wrong; "" for the file as a whole
	Problem      string
	Fix          string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "lock file %s:%d:%d: ", e.File, e.Line, e.Column)
	} else {
		fmt.Fprintf(&b, "lock line %d, column %d: ", e.Line, e.Column)
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

const (
	fixJSON  = `fix the file (a lock is {"server": ["tool_a", "tool_b"]}) or regenerate it with "mcpwatch lock"`
	fixHash  = `regenerate the entry with "mcpwatch lock --fingerprints --server NAME", or drop the key to lock the name only`
	fixProbe = `delete this entry and run "mcpwatch lock --server NAME" once the server answers`
)

// MaxFileBytes bounds a lock file read: a lock of ten thousand servers
// with fingerprints is a few MiB; a path at /dev/zero or a named pipe is
// refused (see readfile).
const MaxFileBytes = 64 << 20

// Read reads and parses a lock file. A missing file is an error wrapping
// fs.ErrNotExist, so a caller can tell "no lock yet" from a broken one; a
// malformed file is a *ParseError naming the file, line and column.
func Read(path string) (*Lock, error) {
	data, err := readfile.Read(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	l, err := Parse(data)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return l, nil
}

// Parse reads a lock from its bytes. Both entry forms are accepted, mixed
// freely (see FORMAT.md); every error is a *ParseError.
func Parse(data []byte) (*Lock, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, newParseError(data, 0, "", "the file starts with a UTF-8 byte order mark, which Python's json.load rejects", "save it as UTF-8 without a BOM")
	}
	if !utf8.Valid(data) {
		return nil, newParseError(data, firstInvalidUTF8(data), "", "the file is not valid UTF-8", fixJSON)
	}
	// Validate the whole document first: json.Unmarshal reports the exact
	// offset of a syntax error, the streaming decoder does not.
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, newParseError(data, max(int(se.Offset)-1, 0), "", "not valid JSON: "+se.Error(), fixJSON)
		}
		return nil, newParseError(data, 0, "", "not valid JSON: "+err.Error(), fixJSON)
	}
	start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	if kind := jsonKind(data[start:]); kind != "an object" {
		return nil, newParseError(data, start, "", "a lock is a JSON object of server names, found "+kind, fixJSON)
	}

	l := &Lock{
		servers:           make(map[string]*lockedServer),
		noTrailingNewline: !bytes.HasSuffix(data, []byte("\n")),
	}
	keyOffsets := make(map[string]int)
	// A fleet's servers lock the same tools: the servers whose values are
	// the same bytes share one parsed entry and one copy of the bytes (a
	// daemon of 100,000 servers kept 1.8 kB of lock for each).
	same := make(map[string]*lockedServer)
	err := walkObject(data, func(server string, keyOff int, value []byte, valueOff int) error {
		if first, dup := keyOffsets[server]; dup {
			line, col := lineColumn(data, first)
			return newParseError(data, keyOff, server, fmt.Sprintf("listed twice (first at line %d, column %d)", line, col), "keep one entry")
		}
		keyOffsets[server] = keyOff
		if s, ok := same[string(value)]; ok {
			l.servers[server] = &lockedServer{entry: s.entry, raw: s.raw}
			return nil // the same bytes parse the same
		}
		entry, err := parseEntry(data, server, value, valueOff)
		if err != nil {
			return err
		}
		s := &lockedServer{entry: entry, raw: string(value)}
		same[s.raw] = s
		l.servers[server] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// parseEntry reads one server's value: a list of names (the names-only form) or an
// object keyed by tool name. Offsets in errors are absolute in doc.
func parseEntry(doc []byte, server string, value []byte, valueOff int) (Entry, error) {
	switch kind := jsonKind(value); kind {
	case "an array":
		return parseNameList(doc, server, value, valueOff)
	case "an object":
		return parseToolObject(doc, server, value, valueOff)
	default:
		return Entry{}, newParseError(doc, valueOff, server,
			`an entry is a list of tool names ["tool_a", "tool_b"] or an object keyed by tool name, found `+kind, fixJSON)
	}
}

func parseNameList(doc []byte, server string, value []byte, valueOff int) (Entry, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(value, &items); err != nil {
		return Entry{}, newParseError(doc, valueOff, server, "unreadable tool list: "+err.Error(), fixJSON)
	}
	tools := make([]ToolLock, 0, len(items))
	// Walk the elements' offsets alongside, so an error points at the
	// element itself rather than at the list.
	off := valueOff + 1
	for _, item := range items {
		off = skipSpaceAndCommas(doc, off)
		if kind := jsonKind(item); kind != "a string" {
			return Entry{}, newParseError(doc, off, server, "the tool list holds "+kind+", not a tool name", fixJSON)
		}
		var name string
		_ = json.Unmarshal(item, &name) // a valid JSON string: cannot fail
		tools = append(tools, ToolLock{Name: name})
		off += len(item)
	}
	return Entry{Tools: tools}.normalized(), nil
}

func parseToolObject(doc []byte, server string, value []byte, valueOff int) (Entry, error) {
	var tools []ToolLock
	seen := make(map[string]bool)
	err := walkObject(value, func(name string, keyOff int, tv []byte, tvOff int) error {
		keyOff += valueOff
		tvOff += valueOff
		if seen[name] {
			return newParseError(doc, keyOff, server, fmt.Sprintf("tool %q is listed twice", name), "keep one entry")
		}
		seen[name] = true
		if kind := jsonKind(tv); kind != "an object" {
			if name == "error" && kind == "a string" {
				// An early version of the Python preflight wrote {"error": "..."} for a failed probe.
				return newParseError(doc, keyOff, server, "this entry records a failed probe, not the expected tools", fixProbe)
			}
			return newParseError(doc, tvOff, server,
				fmt.Sprintf(`tool %q: expected {"description": "sha256:…", "schema": "sha256:…"} or {}, found %s`, name, kind), fixJSON)
		}
		tool := ToolLock{Name: name}
		err := walkObject(tv, func(key string, kOff int, hv []byte, hvOff int) error {
			kOff += tvOff
			var dst *string
			switch key {
			case "schema":
				dst = &tool.Schema
			case "description":
				dst = &tool.Description
			default:
				return newParseError(doc, kOff, server, fmt.Sprintf(`tool %q: unknown key %q (known: "description", "schema")`, name, key), fixJSON)
			}
			if jsonKind(hv) != "a string" {
				return newParseError(doc, hvOff+tvOff, server, fmt.Sprintf("tool %q: %q must be a string", name, key), fixHash)
			}
			_ = json.Unmarshal(hv, dst) // a valid JSON string: cannot fail
			if !validHash(*dst) {
				return newParseError(doc, hvOff+tvOff, server, fmt.Sprintf(`tool %q: %q must be "sha256:" and 64 lowercase hex digits`, name, key), fixHash)
			}
			return nil
		})
		if err != nil {
			return err
		}
		tools = append(tools, tool)
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	return Entry{Tools: tools}.normalized(), nil
}

// walkObject calls visit for each member of a JSON object that is already
// known to be valid, with the byte offsets of its key and value in data.
func walkObject(data []byte, visit func(key string, keyOff int, value []byte, valueOff int) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	for dec.More() {
		keyOff := skipSpaceAndCommas(data, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // object keys are always strings in valid JSON
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		valueOff := int(dec.InputOffset()) - len(value)
		if err := visit(key, keyOff, value, valueOff); err != nil {
			return err
		}
	}
	return nil
}

func skipSpaceAndCommas(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// jsonKind names the kind of a valid JSON value for an error message.
func jsonKind(value []byte) string {
	value = bytes.TrimLeft(value, " \t\r\n")
	if len(value) == 0 {
		return "nothing"
	}
	switch value[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func validHash(s string) bool {
	hex, ok := strings.CutPrefix(s, hashPrefix)
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range []byte(hex) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func newParseError(data []byte, off int, server, problem, fix string) *ParseError {
	line, col := lineColumn(data, off)
	fix = strings.ReplaceAll(fix, "NAME", quoteForShell(server))
	return &ParseError{Line: line, Column: col, Server: server, Problem: problem, Fix: fix}
}

// quoteForShell keeps a suggested command copy-pasteable for any server
// name (sanitize.ShellQuote); NAME stands for a server not known.
func quoteForShell(s string) string {
	if s == "" {
		return "NAME"
	}
	return sanitize.ShellQuote(s)
}

func lineColumn(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	before := data[:off]
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[lineStart:]) + 1
}

func firstInvalidUTF8(data []byte) int {
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size == 1 {
			return off
		}
		off += size
	}
	return len(data)
}

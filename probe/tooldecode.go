package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/intern"
)

// listedTool is a tool as tools/list decodes it, with the members the
// server sent more than once (twice), for the probe's warning.
type listedTool struct {
	Tool
	twice []string
}

// UnmarshalJSON reads a listed tool with its keys spelled exactly as the
// protocol spells them, as Hints reads its annotations. encoding/json
// would match "ANNOTATIONS" to annotations and let the last of two win, so
// {"annotations": {"readOnlyHint": false}, "ANNOTATIONS": {"readOnlyHint":
// true}} read as read-only here while a client that reads exact keys sees a
// tool that is not: a key in another case is some other key, ignored.
// A member sent twice keeps the last (as encoding/json and JavaScript do),
// except annotations: sent twice, neither is trusted, and the tool counts
// as unannotated (not read-only, destructive). Either way the key is noted
// in twice.
//
// Every probe decodes every tool, so the object is read in one pass over
// data (which encoding/json has checked is valid JSON before it calls
// this) rather than through a second Decoder and its tokens: members are
// cut out by eachMember and only the few the probe keeps are decoded.
func (t *listedTool) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data) // valid JSON has only JSON white space at its ends
	if string(data) == "null" {
		return nil // as encoding/json leaves a struct on null
	}
	if len(data) == 0 || data[0] != '{' {
		return errors.New("a tool is not a JSON object")
	}
	var out listedTool
	var seen [len(toolFields)]bool
	err := eachMember(data, func(key, value []byte) error {
		field := slices.Index(toolFields[:], string(key))
		if field < 0 {
			return nil
		}
		if seen[field] && !slices.Contains(out.twice, toolFields[field]) {
			out.twice = append(out.twice, toolFields[field])
		}
		seen[field] = true
		var err error
		switch field {
		case 0:
			out.Name, err = decodeString(value)
		case 1:
			out.Title, err = decodeString(value)
		case 2:
			out.Description, err = decodeString(value)
		case 3:
			out.InputSchema = toolText.Bytes(value)
		case 4:
			out.OutputSchema = toolText.Bytes(value)
		case 5:
			out.Annotations = toolText.Bytes(value)
		}
		return err
	})
	if err != nil {
		return err
	}
	if slices.Contains(out.twice, "annotations") {
		out.Annotations = nil
	}
	*t = out
	return nil
}

// toolText keeps the text of the tools probes decode, so that a server
// listing what it listed at its last probe (as most do, every time) costs
// no new string or schema bytes: the strings a tool's fields hold, and its
// schemas' and annotations' bytes, are shared between the probes and
// servers that read the same; holders never write them (as they never
// did: a Tool's bytes are read, fingerprinted and compared).
var toolText intern.Strings

// toolFields are the members of a tool the probe keeps, spelled exactly.
var toolFields = [...]string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// decodeString reads a JSON value as a string field: a string as
// encoding/json unquotes it (invalid UTF-8 becomes U+FFFD), null as empty
// whatever came before, anything else encoding/json's error.
func decodeString(value []byte) (string, error) {
	switch {
	case string(value) == "null":
		return "", nil
	case len(value) >= 2 && value[0] == '"' && !slices.Contains(value, '\\') && utf8.Valid(value):
		return toolText.Of(value[1 : len(value)-1]), nil // nothing to unquote
	}
	var s string
	err := json.Unmarshal(value, &s)
	return s, err
}

// errMalformed is eachMember's error for text that is not a JSON object;
// encoding/json checks the text before a decoder gets it, so it is only
// seen when a caller hands one something else.
var errMalformed = errors.New("a tool is not a well-formed JSON object")

// eachMember calls fn with each member of the JSON object in data, in
// order: its key unquoted and its value's text without the space around
// it, both only for the call. data must be valid JSON (as encoding/json hands it to an
// UnmarshalJSON); otherwise eachMember stops with an error, never reads
// past data, and never panics.
func eachMember(data []byte, fn func(key, value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errMalformed
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		end := valueEnd(data, i)
		if end < 0 || data[i] != '"' {
			return errMalformed
		}
		key, err := decodeKey(data[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errMalformed
		}
		i = skipSpace(data, i+1)
		end = valueEnd(data, i)
		if end < 0 {
			return errMalformed
		}
		if err := fn(key, data[i:end]); err != nil {
			return err
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return errMalformed
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return nil
		default:
			return errMalformed
		}
	}
}

// decodeKey unquotes a member's key; one without escapes is its own
// bytes.
func decodeKey(quoted []byte) ([]byte, error) {
	if !slices.Contains(quoted, '\\') {
		return quoted[1 : len(quoted)-1], nil
	}
	var key string
	err := json.Unmarshal(quoted, &key)
	return []byte(key), err
}

// valueEnd returns the index just past the JSON value that starts at
// data[i], or -1 when there is none. It matches brackets and skips
// strings; it does not check what it passes over.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = stringEnd(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	return -1 // a literal is never the last byte of an object
}

// stringEnd returns the index just past the string that starts with the
// quote at data[i], or -1 if it is not closed.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

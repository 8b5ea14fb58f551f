// Package jsondoc is what every JSON document mcpwatch writes has in
// common: check, lock, probe, config check and discover with --format json,
// the receipt, and the daemon's API.
//
//   - A document is an object whose first member is "schema_version":
//     SchemaVersion, raised whenever a document changes in a way a reader
//     could trip on (a member renamed, removed or given another type).
//   - A measured duration is seconds, a float, in a member whose name ends
//     in _seconds ("duration_seconds": 0.0123).
//   - A configured duration is written as it is configured, a Go duration
//     string ("timeout": "10s"): see Duration.
//   - Times are RFC 3339; "<", ">" and "&" are written as they are, not as
//     \u003c escapes, so a person reads "<redacted>" and "->".
//
// It imports nothing of ours, so any package may use it.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
)

// schemaVersion is the version of every document's shape. 1 was the shape
// before documents carried one (durations in milliseconds or nanoseconds
// beside seconds); 2 has one duration shape throughout.
const schemaVersion = 2

// Duration is a configured duration: it is written as Go writes a duration
// ("10s", "1m30s"), as the configuration would say it, and read back from
// the same.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string: "10s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"10s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Member is a member a document gets after those of its value.
type Member struct {
	Name  string
	Value any
}

// Marshal returns v, which must encode to a JSON object, as a document:
// "schema_version" first, then v's members, then members; indented, with a
// final newline.
func Marshal(v any, members ...Member) ([]byte, error) {
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `{"schema_version":%d`, schemaVersion)
	body, err := encode(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, errors.New("encode JSON document: not an object")
	}
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		doc.WriteByte(',')
		doc.Write(inner)
	}
	if err := writeMembers(&doc, members, ",", ":"); err != nil {
		return nil, err
	}
	doc.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, doc.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("encode JSON document: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Write writes Marshal's document to w. Nothing is written when v cannot
// be encoded.
func Write(w io.Writer, v any, members ...Member) error {
	b, err := Marshal(v, members...)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// MarshalList returns the document {"<name>": [items...]} as Marshal
// writes it, encoding the items one at a time straight into the document:
// a list of thousands of large items (the daemon's servers) is held once,
// as the document's bytes, rather than as values, then encoded, then
// copied and indented whole. Nothing is returned when an item cannot be
// encoded. members follow the list, as Marshal's do.
func MarshalList(name string, items iter.Seq[any], members ...Member) ([]byte, error) {
	key, err := encode(name)
	if err != nil {
		return nil, err
	}
	var doc bytes.Buffer
	fmt.Fprintf(&doc, "{\n  \"schema_version\": %d,\n  %s: [", schemaVersion, key)
	enc := json.NewEncoder(&doc)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	n := 0
	for item := range items {
		if n > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString("\n    ")
		if err := enc.Encode(item); err != nil {
			return nil, fmt.Errorf("encode JSON document: %w", err)
		}
		doc.Truncate(doc.Len() - 1) // Encode's newline
		n++
	}
	if n > 0 {
		doc.WriteString("\n  ")
	}
	doc.WriteByte(']')
	if err := writeMembers(&doc, members, ",\n  ", ": "); err != nil {
		return nil, err
	}
	doc.WriteString("\n}\n")
	return doc.Bytes(), nil
}

// writeMembers writes each member after sep, its name and value apart by
// colon: the one way both documents' trailing members are written.
func writeMembers(doc *bytes.Buffer, members []Member, sep, colon string) error {
	for _, m := range members {
		name, err := encode(m.Name)
		if err != nil {
			return err
		}
		value, err := encode(m.Value)
		if err != nil {
			return err
		}
		doc.WriteString(sep)
		doc.Write(name)
		doc.WriteString(colon)
		doc.Write(value)
	}
	return nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON document: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Seconds is a measured duration: written as seconds, a float, in a
// member whose name ends in _seconds, and read back from the same.
type Seconds time.Duration

// MarshalJSON writes the duration in seconds: 0.0123.
func (s Seconds) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(s).Seconds()) }

// UnmarshalJSON reads a number of seconds.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a duration in seconds is a number such as 0.5: %w", err)
	}
	*s = Seconds(f * float64(time.Second))
	return nil
}

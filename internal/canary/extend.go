package canary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// Merge is what Extend did to a contracts file that was there already.
type Merge struct {
	// Added are the tools whose proposals were added.
	Added []string
	// Kept are the tools the file had a contract for, kept byte for byte;
	// Edited are those among them that differ from what would be proposed
	// now, comments aside (a person edited them, or the server changed
	// since), and contracts for tools init does not propose.
	Kept, Edited []string
	// Unlisted are the tools the file has a contract for that the server
	// does not list now: kept too, for a person to remove.
	Unlisted []string
}

// Extend adds to an existing contracts file the entries for tools it has
// no contract for, and changes nothing else: every byte of it stays where
// it was, comments, edits and the order of members included, and the new
// members go at the end of its "tools" object. listed are the tools the
// server lists now. A file that is not a contracts file is an error, and
// is not changed.
func Extend(raw []byte, entries []Entry, listed []string) ([]byte, Merge, error) {
	var m Merge
	f, err := contracts.ParseFile(raw)
	if err != nil {
		return nil, m, err
	}
	var members map[string]json.RawMessage
	var doc struct {
		Tools map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, m, err
	}
	members = doc.Tools
	var add []Entry
	for _, e := range entries {
		old, ok := members[e.Tool]
		if !ok {
			add = append(add, e)
			m.Added = append(m.Added, e.Tool)
			continue
		}
		m.Kept = append(m.Kept, e.Tool)
		if !sameJSON(old, []byte(value(e))) {
			m.Edited = append(m.Edited, e.Tool)
		}
	}
	for _, name := range f.Names() {
		if !slices.Contains(m.Kept, name) {
			m.Kept = append(m.Kept, name)
			if !slices.Contains(listed, name) {
				m.Unlisted = append(m.Unlisted, name)
			} else {
				// A contract for a tool init does not propose (a write
				// a person chose to call): theirs.
				m.Edited = append(m.Edited, name)
			}
		}
	}
	slices.Sort(m.Kept)
	slices.Sort(m.Edited)
	if len(add) == 0 {
		return raw, m, nil
	}
	closing, empty, err := toolsEnd(raw)
	if err != nil {
		return nil, m, err
	}
	var b bytes.Buffer
	// Up to the last member's end (or the object's "{"), then the new
	// members, then the whitespace and "}" that closed the object.
	last := len(bytes.TrimRight(raw[:closing], " \t\r\n"))
	b.Write(raw[:last])
	for i, e := range add {
		if i > 0 || !empty {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.WriteString(member(e))
	}
	b.WriteString("\n  ")
	b.Write(raw[closing:])
	out := b.Bytes()
	if _, err := contracts.ParseFile(out); err != nil {
		return nil, m, fmt.Errorf("the file extended would not read back (%w); it was left as it is", err)
	}
	return out, m, nil
}

// toolsEnd finds the "}" that closes the top-level "tools" object of a
// contracts file, and whether the object is empty.
func toolsEnd(raw []byte) (closing int, empty bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false, errors.New("not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false, err
		}
		if key != "tools" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return 0, false, errors.New(`"tools" is not an object`)
		}
		n := 0
		for dec.More() {
			var skip json.RawMessage
			if _, err := dec.Token(); err != nil {
				return 0, false, err
			}
			if err := dec.Decode(&skip); err != nil {
				return 0, false, err
			}
			n++
		}
		if _, err := dec.Token(); err != nil {
			return 0, false, err
		}
		return int(dec.InputOffset()) - 1, n == 0, nil
	}
	return 0, false, errors.New(`no "tools" object`)
}

// sameJSON reports whether two contracts are equal as JSON values, their
// "$comment" aside (it says what init saw, such as how long a call took).
func sameJSON(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	delete(x, "$comment")
	delete(y, "$comment")
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
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
func (t *listedTool) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil // as encoding/json leaves a struct on null
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if open, err := dec.Token(); err != nil || open != json.Delim('{') {
		return errors.New("a tool is not a JSON object")
	}
	var out listedTool
	fields := map[string]any{
		"name":         &out.Name,
		"title":        &out.Title,
		"description":  &out.Description,
		"inputSchema":  &out.InputSchema,
		"outputSchema": &out.OutputSchema,
		"annotations":  &out.Annotations,
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		dst, known := fields[key]
		if !known {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if seen[key] && !slices.Contains(out.twice, key) {
			out.twice = append(out.twice, key)
		}
		seen[key] = true
		if s, ok := dst.(*string); ok {
			*s = "" // a null leaves the field empty, whatever came first
		}
		if err := dec.Decode(dst); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if slices.Contains(out.twice, "annotations") {
		out.Annotations = nil
	}
	*t = out
	return nil
}

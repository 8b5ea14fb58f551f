package contracts

import (
	"encoding/json"
	"errors"
	"math"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// ErrSchemaUnread: the validator cannot read a tool's input schema, or
// checking an input against it would pass the bounds of a jsonSchema
// check; nothing is known of the input then.
var ErrSchemaUnread = errors.New("the validator cannot check an input against this schema")

// ValidateInput checks an input (JSON values: map[string]any, []any,
// float64, string, bool, nil) against a tool's input schema, with the
// validator a jsonSchema assertion uses and within the same bounds (the
// schema is the server's, so as hostile as an answer): nil when it
// validates, ErrSchemaUnread when it cannot be checked, else the
// validator's complaint, where it failed. A remote $ref is never fetched.
func ValidateInput(schema json.RawMessage, input any) error {
	if len(schema) == 0 {
		return nil
	}
	var s jsonschema.Schema
	if json.Unmarshal(schema, &s) != nil {
		return ErrSchemaUnread
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return ErrSchemaUnread
	}
	g, err := newSchemaGraph(rs)
	if err != nil {
		return ErrSchemaUnread
	}
	if c := schemaCost(g, rs.Schema(), input); math.IsInf(c.steps, 1) || c.steps > maxSchemaSteps || c.text() > maxSchemaTextBytes {
		return ErrSchemaUnread
	}
	if err := rs.Validate(input); err != nil {
		return errors.New(sanitize.Truncate(innermost(err.Error()), maxDetailRead))
	}
	return nil
}

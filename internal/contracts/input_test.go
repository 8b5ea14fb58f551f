package contracts

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// An input is checked against a tool's input schema by the jsonSchema
// assertion's validator: what validates, what does not and where, and a
// schema it cannot check (a remote $ref, a $ref to itself) saying so.
func TestValidateInput(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","required":["k"],"properties":{"k":{"type":"string","pattern":"^[a-z]+$"}}}`)
	if err := ValidateInput(schema, map[string]any{"k": "abc"}); err != nil {
		t.Errorf("a valid input: %v", err)
	}
	if err := ValidateInput(schema, map[string]any{"k": "ABC"}); err == nil || errors.Is(err, ErrSchemaUnread) || !strings.Contains(err.Error(), "pattern") {
		t.Errorf("an input that breaks the pattern: %v", err)
	}
	for _, s := range []string{`{"$ref":"https://example.com/s.json"}`, `{"$ref":"#"}`, `{"type":7}`} {
		if err := ValidateInput(json.RawMessage(s), map[string]any{}); !errors.Is(err, ErrSchemaUnread) {
			t.Errorf("%s: %v, want ErrSchemaUnread", s, err)
		}
	}
}

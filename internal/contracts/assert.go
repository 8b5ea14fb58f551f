package contracts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Assertion is one check of a contract against one answer.
type Assertion struct {
	Name    string `json:"name"`             // status, not_error_code, errorCode, requiredFields, maxRows, contains, notContains, jsonSchema
	Outcome string `json:"outcome"`          // pass, fail or skipped
	Detail  string `json:"detail,omitempty"` // what was found, one line
}

// Outcomes of an assertion.
const (
	Pass    = "pass"
	Fail    = "fail"
	Skipped = "skipped"
)

// answer is what a call came back with, as the assertions read it.
type answer struct {
	r *probe.CallResult
	// text is what an agent reads: the text blocks of a result (or the
	// JSON of its structuredContent when it has none), else the error.
	text string
	// doc is the JSON document of a result: structuredContent, else the
	// first text block that parses as JSON; nil when there is none.
	doc    any
	raw    []byte // the document as sent, for its member order
	hasDoc bool
}

func newAnswer(r *probe.CallResult) answer {
	a := answer{r: r}
	if !r.Answered {
		a.text = r.RPCMessage
		if a.text == "" {
			a.text = r.Error
		}
		return a
	}
	a.text = r.Text()
	if !isNull(r.StructuredContent) && json.Unmarshal(r.StructuredContent, &a.doc) == nil {
		a.hasDoc, a.raw = true, r.StructuredContent
		if a.text == "" {
			a.text = string(r.StructuredContent)
		}
		return a
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r.Content, &blocks)
	for _, b := range blocks {
		t := strings.TrimSpace(b.Text)
		if b.Type != "text" || t == "" || (t[0] != '{' && t[0] != '[') {
			continue
		}
		if json.Unmarshal([]byte(t), &a.doc) == nil {
			a.hasDoc, a.raw = true, []byte(t)
			break
		}
	}
	return a
}

// succeeded: a result that is not an error and does not report one.
func (a answer) succeeded() bool { return a.r.Answered && !a.r.IsError && a.reportedError() == "" }

// refused: the server said no in a way an agent can read: an isError
// result, a JSON-RPC error, or HTTP 401/403.
func (a answer) refused() bool {
	r := a.r
	return (r.Answered && r.IsError) || r.RPCCode != 0 ||
		r.Reason == probe.ReasonUnauthorized || r.Reason == probe.ReasonForbidden
}

// reportedError is the error a success result carries in its document: a
// top-level "error" member that is not null, false or "". Servers that wrap
// a failed fetch answer {"error":"fetch failed"} without isError.
func (a answer) reportedError() string {
	m, ok := a.doc.(map[string]any)
	if !a.hasDoc || !ok {
		return ""
	}
	switch v := m["error"].(type) {
	case nil:
		return ""
	case bool:
		if !v {
			return ""
		}
	case string:
		if v == "" {
			return ""
		}
	}
	b, _ := json.Marshal(m["error"])
	return string(b)
}

// codes are the numbers an error carries: its HTTP status, its JSON-RPC
// code, and the whole numbers written in its text.
func (a answer) codes() []int {
	var out []int
	if a.r.HTTPStatus != 0 {
		out = append(out, a.r.HTTPStatus)
	}
	if a.r.RPCCode != 0 {
		out = append(out, a.r.RPCCode)
	}
	if a.succeeded() {
		return out
	}
	text := a.text
	if e := a.reportedError(); e != "" {
		text += " " + e
	}
	out = append(out, numbersIn(text)...)
	if m, ok := a.doc.(map[string]any); ok {
		for _, k := range []string{"code", "errorCode", "status"} {
			if f, ok := m[k].(float64); ok {
				out = append(out, int(f))
			}
		}
	}
	return out
}

// numberRE finds runs of digits, with a minus sign before them.
var numberRE = regexp.MustCompile(`-?\d+`)

// numbersIn are the codes written in a text: whole numbers of 3 to 5
// digits standing alone ("401", "-32603"), not part of a word, a version, a
// date or a decimal ("v401", "1.401", "2026-08-01").
func numbersIn(text string) []int {
	var out []int
	isPart := func(c byte) bool {
		return c == '.' || c == '-' || c == '_' || c == '/' ||
			'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for _, loc := range numberRE.FindAllStringIndex(text, 100) {
		start, end := loc[0], loc[1]
		digits := strings.TrimPrefix(text[start:end], "-")
		if len(digits) < 3 || len(digits) > 5 {
			continue
		}
		if start > 0 && isPart(text[start-1]) || end < len(text) && isPart(text[end]) {
			continue
		}
		if n, err := strconv.Atoi(text[start:end]); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// describe is what came back, in one line.
func (a answer) describe() string {
	r := a.r
	switch {
	case !r.Answered && r.RPCCode != 0:
		return fmt.Sprintf("JSON-RPC error %d: %s", r.RPCCode, r.RPCMessage)
	case !r.Answered && r.HTTPStatus != 0:
		return fmt.Sprintf("HTTP %d (%s): %s", r.HTTPStatus, r.Reason, r.Error)
	case !r.Answered:
		return fmt.Sprintf("no result (%s): %s", r.Reason, r.Error)
	case r.IsError:
		return "isError: " + a.text
	case a.reportedError() != "":
		return "a result that reports an error: " + a.text
	}
	return "result: " + a.text
}

// evaluate runs every assertion of e against one answer, in a fixed order.
func evaluate(e Expect, a answer) []Assertion {
	var out []Assertion
	add := func(name, outcome, detail string) {
		out = append(out, Assertion{Name: name, Outcome: outcome, Detail: detail})
	}
	// status
	switch {
	case e.Status == StatusPass && a.succeeded():
		add("status", Pass, "")
	case e.Status == StatusPass:
		add("status", Fail, "expected success, got "+a.describe())
	case a.refused():
		add("status", Pass, "refused as expected: "+a.describe())
	default:
		add("status", Fail, "expected a refusal (isError, a JSON-RPC error or HTTP 401/403), got "+a.describe())
	}
	if len(e.NotErrorCode) > 0 {
		hit := 0
		for _, c := range a.codes() {
			if slices.Contains(e.NotErrorCode, c) {
				hit = c
				break
			}
		}
		if hit != 0 {
			add("not_error_code", Fail, fmt.Sprintf("error code %d: %s", hit, a.describe()))
		} else {
			add("not_error_code", Pass, "")
		}
	}
	if e.ErrorCode != nil {
		if a.refused() && slices.Contains(a.codes(), *e.ErrorCode) {
			add("errorCode", Pass, "")
		} else {
			add("errorCode", Fail, fmt.Sprintf("expected error code %d, got %s", *e.ErrorCode, a.describe()))
		}
	}
	content := func(name string, check func() (bool, string)) {
		switch {
		case !a.r.Answered:
			add(name, Skipped, "no result to check")
		case !a.hasDoc:
			add(name, Fail, "the result has no JSON document (structuredContent, or a text block that parses as JSON): "+a.describe())
		default:
			ok, detail := check()
			add(name, map[bool]string{true: Pass, false: Fail}[ok], detail)
		}
	}
	if len(e.RequiredFields) > 0 {
		content("requiredFields", func() (bool, string) {
			var missing []string
			for _, f := range e.RequiredFields {
				if !hasField(a.doc, f) {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				return false, "missing " + strings.Join(missing, ", ")
			}
			return true, ""
		})
	}
	if e.MaxRows != nil {
		content("maxRows", func() (bool, string) {
			rows, ok := firstArray(a.raw)
			switch {
			case !ok:
				return false, "no array in the result"
			case len(rows) > *e.MaxRows:
				return false, fmt.Sprintf("%d rows, more than %d", len(rows), *e.MaxRows)
			}
			return true, fmt.Sprintf("%d rows", len(rows))
		})
	}
	if e.schema != nil {
		content("jsonSchema", func() (bool, string) {
			if err := e.schema.Validate(a.doc); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
	for _, s := range e.Contains {
		if strings.Contains(a.text, s) {
			add("contains", Pass, fmt.Sprintf("%q", s))
		} else {
			add("contains", Fail, fmt.Sprintf("%q not found in %s", s, a.describe()))
		}
	}
	for _, s := range e.NotContains {
		if strings.Contains(a.text, s) {
			add("notContains", Fail, fmt.Sprintf("%q found in %s", s, a.describe()))
		} else {
			add("notContains", Pass, fmt.Sprintf("%q", s))
		}
	}
	return out
}

// hasField looks a field up in a document: a dotted path ("meta.source")
// in an object, or in every element of an array of rows. A member that is
// present with null counts as present.
func hasField(doc any, path string) bool {
	switch d := doc.(type) {
	case []any:
		if len(d) == 0 {
			return false
		}
		for _, row := range d {
			if !hasField(row, path) {
				return false
			}
		}
		return true
	case map[string]any:
		if _, ok := d[path]; ok {
			return true // a key that itself has a dot
		}
		head, rest, dotted := strings.Cut(path, ".")
		v, ok := d[head]
		if !ok {
			return false
		}
		if !dotted {
			return true
		}
		return hasField(v, rest)
	}
	return false
}

// firstArray is the first array in a document, depth first in document
// order: the document itself, or the first array-valued member found.
func firstArray(b []byte) ([]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if tok == json.Delim('[') {
			// Count the elements of this array.
			var rows []any
			for dec.More() {
				var v any
				if dec.Decode(&v) != nil {
					return nil, false
				}
				rows = append(rows, v)
			}
			if rows == nil {
				rows = []any{}
			}
			return rows, true
		}
	}
}

package contracts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/credential"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
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
	// tooDeep is the depth of a document nested deeper than maxDocDepth,
	// which the assertions do not read (see maxDocDepth); 0 otherwise.
	tooDeep int
}

// maxDocDepth caps how deep a result's JSON document may nest for the
// assertions to read it. The work of a jsonSchema check, and the length of
// its error, grow with the depth (a recursive $ref wraps its error once per
// level); a real tool's answer nests a dozen levels, not thousands.
const maxDocDepth = 64

// jsonDepth is how deep a JSON text nests: 0 for a scalar, 1 for [] or {}.
// It reads the bytes only, so a document too deep to be worth decoding is
// never decoded.
func jsonDepth(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// decodeDoc decodes b into a's document unless it nests too deep; ok is
// false when b is not JSON.
func (a *answer) decodeDoc(b []byte) (ok bool) {
	if d := jsonDepth(b); d > maxDocDepth {
		if !json.Valid(b) {
			return false
		}
		a.hasDoc, a.raw, a.tooDeep = true, b, d
		return true
	}
	if json.Unmarshal(b, &a.doc) != nil {
		return false
	}
	a.hasDoc, a.raw = true, b
	return true
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
	if !isNull(r.StructuredContent) && a.decodeDoc(r.StructuredContent) {
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
		if a.decodeDoc([]byte(t)) {
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

// reachedTool: the server answered the call itself, with a result
// (isError or not) or a JSON-RPC error, rather than the call failing on
// the way (a timeout, a broken connection, an HTTP status, an answer that
// is not a result).
func (a answer) reachedTool() bool {
	r := a.r
	return r.Answered || (r.RPCCode != 0 && r.Reason == probe.ReasonRPCError && (r.HTTPStatus == 0 || r.HTTPStatus/100 == 2))
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

// evidence is the answer as the credential classifier reads it.
func (a answer) evidence(given bool) credential.Evidence {
	r := a.r
	e := credential.Evidence{Given: given, HTTPStatus: r.HTTPStatus, RPCMessage: r.RPCMessage, Error: r.Error}
	if r.Answered {
		e.IsError, e.Text, e.HasDocument, e.ReportedError = r.IsError, a.text, a.hasDoc, a.reportedError()
	}
	return e
}

// expectsCredentialRefusal: a contract whose errorCode is 401 or 403
// expects the server to refuse for want of a credential.
func expectsCredentialRefusal(e Expect) bool {
	return e.ErrorCode != nil && (*e.ErrorCode == 401 || *e.ErrorCode == 403)
}

// codes are the numbers an error carries: its HTTP status, its JSON-RPC
// code, the whole numbers written in its text, and 401 for a rejected
// credential, however the server words it (Slack's "invalid_auth" is a
// 401 to the contract that says not_error_code: [401, 403]).
func (a answer) codes() []int {
	var out []int
	if a.r.HTTPStatus != 0 {
		out = append(out, a.r.HTTPStatus)
	}
	if a.r.RPCCode != 0 {
		out = append(out, a.r.RPCCode)
	}
	if _, rejected := credential.Rejected(a.evidence(false)); rejected && !slices.Contains(out, 401) {
		out = append(out, 401)
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
// ctx is the call's: a jsonSchema check ends with it.
func evaluate(ctx context.Context, e Expect, a answer) []Assertion {
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
	case e.Status == StatusCredentialAccepted && a.reachedTool():
		// A rejected credential fails the call before this (the
		// "credential" assertion Run puts first).
		add("status", Pass, "answered: "+a.describe())
	case e.Status == StatusCredentialAccepted:
		add("status", Fail, "expected an answer from the tool (a success, or a refusal of its input), got "+a.describe())
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
		case a.tooDeep > 0:
			add(name, Fail, fmt.Sprintf("not checked: the result's JSON document nests %d levels deep, more than the %d mcpwatch reads", a.tooDeep, maxDocDepth))
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
		content("jsonSchema", func() (bool, string) { return e.checkSchema(ctx, a.doc) })
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

// checkSchema validates doc against e's schema, if the cost bound of the
// check is within its caps (schemacost.go), and returns by the end of ctx
// either way: a check cut short by the deadline still ends soon after,
// since its work is bounded.
func (e Expect) checkSchema(ctx context.Context, doc any) (bool, string) {
	c := schemaCost(e.graph, e.schema.Schema(), doc)
	const why = "a large or deep answer, or a schema whose anyOf, oneOf or allOf branches each recurse"
	switch {
	case math.IsInf(c.steps, 1):
		return false, fmt.Sprintf("not checked: the answer is too large to bound the cost of checking it against the schema (over %d pairs of a value and a schema to weigh; %s)", maxCostPairs, why)
	case c.steps > maxSchemaSteps || c.text() > maxSchemaTextBytes:
		return false, fmt.Sprintf("not checked: checking this answer against the schema could take %.2g validation steps (mcpwatch's cap: %d) and build %.2g bytes of error text (cap: %d MiB; %s)",
			c.steps, maxSchemaSteps, c.text(), maxSchemaTextBytes>>20, why)
	}
	done := make(chan error, 1)
	go func() { done <- e.schema.Validate(doc) }()
	select {
	case err := <-done:
		if err != nil {
			return false, sanitize.Truncate(innermost(err.Error()), maxDetailRead)
		}
		return true, ""
	case <-ctx.Done():
		return false, "not checked: the call's deadline passed during the check"
	}
}

// innermost shortens the validator's error to what failed where: it wraps
// its error in "validating SCHEMA: " once per schema on the way down, so a
// failure 60 levels deep would otherwise show only the way, cut.
func innermost(msg string) string {
	const wrap = "validating "
	at, levels := "", 0
	for strings.HasPrefix(msg, wrap) {
		name, rest, ok := strings.Cut(msg[len(wrap):], ": ")
		if !ok {
			break
		}
		at, msg, levels = name, rest, levels+1
	}
	switch levels {
	case 0:
		return msg
	case 1:
		return "at " + at + ": " + msg
	}
	return fmt.Sprintf("at %s, %d schemas down: %s", at, levels, msg)
}

// maxDetailRead is how much of a validator's error is read to make an
// assertion's one-line detail, which keeps less (oneLine).
const maxDetailRead = 4096

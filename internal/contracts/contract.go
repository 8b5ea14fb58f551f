// Package contracts reads canary-call contracts and judges tool calls by
// them: which tool to call, with what input, how often to retry, and what
// the answer must look like. The file format is mcp-probe's sidecar
// "toolsFile", read unchanged; docs/contracts-format.md defines every
// field's meaning.
//
// It decides, from a tool's annotations, whether a call is allowed at all
// (a monitor must never write), calls through a probe.Caller within the
// deadline it is given, and reports each call with every assertion's
// outcome. It knows nothing of configuration files, schedules or metrics.
package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Contract is what one tool is called with and must answer.
type Contract struct {
	Tool string
	// Input is the arguments object sent with the call ({} when the file
	// gives none).
	Input  json.RawMessage
	Retry  Retry
	Expect Expect
	// AllowSideEffects lets a tool that is not annotated read-only be
	// called. A destructive one also needs the configuration's opt-in.
	AllowSideEffects bool
	// Auto marks a contract no person wrote: the configuration's calls:
	// auto chose the tool (see Auto).
	Auto bool
	// Disabled is a contract kept in the file but not called ("disabled":
	// true): what mcpwatch init writes for a tool it proposes as a canary
	// but that needs opt-ins first.
	Disabled bool
	// Placeholders are the inputs still to fill in (their paths, such as
	// "input.path"): string values written as "<fill in ...>". A contract
	// with any is not called until they are filled (see Pending).
	Placeholders []string
	// Schedule is the contract's own call schedule ("schedule": "@every
	// 8h", a cron expression), as written: the daemon calls the tool on it
	// instead of its server's call_schedule and the default pace of a
	// metered tool or a generated input (config.Server.CallPlan, which
	// checks it at load). "" when it names none.
	Schedule string
}

// Pending reports whether the contract's input still has placeholders to
// fill in: it is not called, and says so.
func (c Contract) Pending() bool { return len(c.Placeholders) > 0 }

// PlaceholderPrefix starts a placeholder input value: "<fill in: string,
// the path to read>". A value that starts so and ends with ">" is one.
const PlaceholderPrefix = "<fill in"

// IsPlaceholder reports whether a string input value is a placeholder.
func IsPlaceholder(v string) bool {
	return strings.HasPrefix(v, PlaceholderPrefix) && strings.HasSuffix(v, ">")
}

// placeholders lists the paths of the placeholder strings in an input.
func placeholders(path string, v any) []string {
	switch v := v.(type) {
	case string:
		if IsPlaceholder(v) {
			return []string{path}
		}
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(v) {
			out = append(out, placeholders(path+"."+k, v[k])...)
		}
		return out
	case []any:
		var out []string
		for i, x := range v {
			out = append(out, placeholders(fmt.Sprintf("%s[%d]", path, i), x)...)
		}
		return out
	}
	return nil
}

// Retry is how often a failed call is tried again, within the call's
// deadline.
type Retry struct {
	Attempts int           // in all, the first included; 1 when not set
	Delay    time.Duration // between two attempts
	// RetryOn are the failures worth another attempt; an attempt that
	// failed otherwise is final. Empty: any failed attempt is retried.
	RetryOn []Condition
}

// MaxAttempts bounds Retry.Attempts, whatever a file asks.
const MaxAttempts = 10

// Condition is one retryOn entry: an HTTP status or a JSON-RPC code (a
// number), "timeout", or a phrase looked for in the error text.
type Condition struct {
	Code   int    // non-zero for a number
	Phrase string // lower case; "timeout" matches a call that timed out
}

func (c Condition) String() string {
	if c.Phrase == "" {
		return fmt.Sprint(c.Code)
	}
	return fmt.Sprintf("%q", c.Phrase)
}

// Expect are a contract's assertions.
type Expect struct {
	// Status is StatusPass (the call must succeed), StatusFail (it must
	// be refused, as a denied write should be) or StatusCredentialAccepted
	// (it must be answered, whatever the tool made of its input).
	Status         Status
	NotErrorCode   []int
	ErrorCode      *int
	RequiredFields []string
	MaxRows        *int
	Contains       []string
	NotContains    []string
	// JSONSchema is the schema as written; schema its resolved form.
	JSONSchema json.RawMessage
	schema     *jsonschema.Resolved
	graph      *schemaGraph // for the cost bound of a check (schemacost.go)
}

// Status is what a call is expected to do.
type Status string

const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	// StatusCredentialAccepted: the call must reach the tool and be
	// answered, a success or a refusal of its input (a validation error, a
	// not found) alike, and show neither a rejected credential nor a
	// transport failure. It is what a call with an input generated from
	// the tool's schema can prove: that the server's credential is taken,
	// not that the tool works.
	StatusCredentialAccepted Status = "credentialAccepted"
)

// File is a parsed contracts file: a contract per tool name.
type File struct {
	Tools map[string]Contract
}

// Names returns the tools the file has contracts for, sorted.
func (f File) Names() []string {
	names := make([]string, 0, len(f.Tools))
	for n := range f.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Sorted returns the contracts in the order of their tool names.
func (f File) Sorted() []Contract {
	out := make([]Contract, 0, len(f.Tools))
	for _, n := range f.Names() {
		out = append(out, f.Tools[n])
	}
	return out
}

// The wire shapes. Unknown keys are errors: a misspelt assertion would
// otherwise pass silently.
type fileJSON struct {
	Tools map[string]json.RawMessage `json:"tools"`
	// Comment is for people (mcpwatch init says what wrote the file).
	Comment json.RawMessage `json:"$comment"`
}

type contractJSON struct {
	Input            json.RawMessage `json:"input"`
	Retry            json.RawMessage `json:"retry"`
	Expect           json.RawMessage `json:"expect"`
	AllowSideEffects *bool           `json:"allowSideEffects"`
	// mcpwatch's own keys: see Contract.Disabled, and a comment for
	// people (what mcpwatch init writes a proposal's opt-ins in).
	Disabled *bool           `json:"disabled"`
	Comment  json.RawMessage `json:"$comment"`
	Schedule json.RawMessage `json:"schedule"`
}

type retryJSON struct {
	Attempts *float64          `json:"attempts"`
	DelayMs  *float64          `json:"delayMs"`
	RetryOn  []json.RawMessage `json:"retryOn"`
}

type expectJSON struct {
	Status         *string         `json:"status"`
	NotErrorCode   json.RawMessage `json:"not_error_code"`
	ErrorCode      *float64        `json:"errorCode"`
	RequiredFields []string        `json:"requiredFields"`
	MaxRows        *float64        `json:"maxRows"`
	Contains       json.RawMessage `json:"contains"`
	NotContains    json.RawMessage `json:"notContains"`
	JSONSchema     json.RawMessage `json:"jsonSchema"`
}

// ParseFile reads a contracts file: {"tools": {NAME: CONTRACT, ...}}.
// Errors name the tool and the key.
func ParseFile(data []byte) (File, error) {
	var f fileJSON
	if err := strictDecode(data, &f); err != nil {
		return File{}, fmt.Errorf("not a contracts file (want {\"tools\": {NAME: {input, retry, expect, allowSideEffects}}}): %s", describe(err))
	}
	if f.Tools == nil {
		return File{}, errors.New(`no "tools" object: want {"tools": {NAME: {input, retry, expect, allowSideEffects}}}`)
	}
	return parseTools("tools", f.Tools)
}

// ParseTools reads the contracts of a "tools" object given as JSON
// members, as inline configuration holds them; errors name each tool as
// prefix.NAME.
func ParseTools(prefix string, tools map[string]json.RawMessage) (File, error) {
	return parseTools(prefix, tools)
}

func parseTools(prefix string, tools map[string]json.RawMessage) (File, error) {
	out := File{Tools: make(map[string]Contract, len(tools))}
	var errs []error
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			errs = append(errs, fmt.Errorf("%s: a contract has an empty tool name", prefix))
			continue
		}
		c, err := parseContract(name, tools[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %w", prefix, name, err))
			continue
		}
		out.Tools[name] = c
	}
	return out, errors.Join(errs...)
}

func parseContract(name string, raw json.RawMessage) (Contract, error) {
	var cj contractJSON
	if err := strictDecode(raw, &cj); err != nil {
		return Contract{}, fmt.Errorf("%s (known keys: input, retry, expect, allowSideEffects, disabled, schedule, $comment)", describe(err))
	}
	c := Contract{Tool: name, Input: json.RawMessage("{}"), Retry: Retry{Attempts: 1}, Expect: Expect{Status: StatusPass}}
	if !isNull(cj.Input) {
		if t := bytes.TrimSpace(cj.Input); len(t) == 0 || t[0] != '{' {
			return c, errors.New("input: must be an object of the tool's arguments")
		}
		c.Input = compact(cj.Input)
		var in any
		if json.Unmarshal(c.Input, &in) == nil {
			c.Placeholders = placeholders("input", in)
		}
	}
	if cj.AllowSideEffects != nil {
		c.AllowSideEffects = *cj.AllowSideEffects
	}
	if cj.Disabled != nil {
		c.Disabled = *cj.Disabled
	}
	if !isNull(cj.Schedule) {
		if json.Unmarshal(cj.Schedule, &c.Schedule) != nil || strings.TrimSpace(c.Schedule) == "" {
			return c, errors.New(`schedule: want how often the daemon calls the tool, as a string: "@every 8h" or a cron expression`)
		}
	}
	if !isNull(cj.Comment) {
		var comment string
		if json.Unmarshal(cj.Comment, &comment) != nil {
			return c, errors.New("$comment: must be a string (it is for people, and never read)")
		}
	}
	if !isNull(cj.Retry) {
		var rj retryJSON
		if err := strictDecode(cj.Retry, &rj); err != nil {
			return c, fmt.Errorf("retry: %s (known keys: attempts, delayMs, retryOn)", describe(err))
		}
		r, err := parseRetry(rj)
		if err != nil {
			return c, fmt.Errorf("retry.%w", err)
		}
		c.Retry = r
	}
	if !isNull(cj.Expect) {
		var ej expectJSON
		if err := strictDecode(cj.Expect, &ej); err != nil {
			return c, fmt.Errorf("expect: %s (known keys: status, not_error_code, errorCode, requiredFields, maxRows, contains, notContains, jsonSchema)", describe(err))
		}
		e, err := parseExpect(ej)
		if err != nil {
			return c, fmt.Errorf("expect.%w", err)
		}
		c.Expect = e
	}
	return c, nil
}

func parseRetry(rj retryJSON) (Retry, error) {
	r := Retry{Attempts: 1}
	if rj.Attempts != nil {
		n, ok := whole(*rj.Attempts)
		if !ok || n < 1 || n > MaxAttempts {
			return r, fmt.Errorf("attempts: want a whole number from 1 to %d", MaxAttempts)
		}
		r.Attempts = n
	}
	if rj.DelayMs != nil {
		ms := *rj.DelayMs
		if ms < 0 || ms > 10*60*1000 || math.IsNaN(ms) {
			return r, errors.New("delayMs: want milliseconds from 0 to 600000")
		}
		r.Delay = time.Duration(ms * float64(time.Millisecond))
	}
	for i, raw := range rj.RetryOn {
		var n float64
		var s string
		switch {
		case json.Unmarshal(raw, &n) == nil:
			code, ok := whole(n)
			if !ok || code == 0 {
				return r, fmt.Errorf("retryOn[%d]: a number must be a whole, non-zero HTTP status or JSON-RPC code", i)
			}
			r.RetryOn = append(r.RetryOn, Condition{Code: code})
		case json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "":
			r.RetryOn = append(r.RetryOn, Condition{Phrase: strings.ToLower(strings.TrimSpace(s))})
		default:
			return r, fmt.Errorf("retryOn[%d]: want an HTTP status, a JSON-RPC code, \"timeout\" or a phrase of the error text", i)
		}
	}
	return r, nil
}

func parseExpect(ej expectJSON) (Expect, error) {
	e := Expect{Status: StatusPass}
	if ej.ErrorCode != nil {
		code, ok := whole(*ej.ErrorCode)
		if !ok || code == 0 {
			return e, errors.New("errorCode: want a whole, non-zero JSON-RPC code or HTTP status")
		}
		e.ErrorCode = &code
		e.Status = StatusFail // an expected error code is an expected refusal
	}
	if ej.Status != nil {
		switch Status(*ej.Status) {
		case StatusPass:
			if e.ErrorCode != nil {
				return e, errors.New(`status: "pass" contradicts errorCode, which expects the call to be refused; drop one of them`)
			}
			e.Status = StatusPass
		case StatusFail:
			e.Status = StatusFail
		case StatusCredentialAccepted:
			if e.ErrorCode != nil {
				return e, errors.New(`status: "credentialAccepted" contradicts errorCode, which expects the call to be refused; drop one of them`)
			}
			e.Status = StatusCredentialAccepted
		default:
			return e, fmt.Errorf(`status: want "pass" (the call must succeed), "fail" (it must be refused) or "credentialAccepted" (it must be answered, its input refused or not), got %q`, sanitize.Truncate(*ej.Status, 20))
		}
	}
	codes, err := numbers(ej.NotErrorCode)
	if err != nil {
		return e, fmt.Errorf("not_error_code: %w", err)
	}
	e.NotErrorCode = codes
	for i, f := range ej.RequiredFields {
		if strings.TrimSpace(f) == "" {
			return e, fmt.Errorf("requiredFields[%d]: empty field name", i)
		}
	}
	e.RequiredFields = ej.RequiredFields
	if ej.MaxRows != nil {
		n, ok := whole(*ej.MaxRows)
		if !ok || n < 0 {
			return e, errors.New("maxRows: want a whole number, 0 or more")
		}
		e.MaxRows = &n
	}
	if e.Contains, err = strs(ej.Contains); err != nil {
		return e, fmt.Errorf("contains: %w", err)
	}
	if e.NotContains, err = strs(ej.NotContains); err != nil {
		return e, fmt.Errorf("notContains: %w", err)
	}
	if !isNull(ej.JSONSchema) {
		var s jsonschema.Schema
		if err := json.Unmarshal(ej.JSONSchema, &s); err != nil {
			return e, fmt.Errorf("jsonSchema: not a JSON Schema: %w", err)
		}
		rs, err := s.Resolve(nil) // no loader: a remote $ref is an error, never fetched
		if err != nil {
			return e, fmt.Errorf("jsonSchema: %w", err)
		}
		g, err := newSchemaGraph(rs)
		if err != nil {
			return e, fmt.Errorf("jsonSchema: %w", err)
		}
		e.JSONSchema, e.schema, e.graph = compact(ej.JSONSchema), rs, g
	}
	return e, nil
}

// numbers reads a number or a list of numbers.
func numbers(raw json.RawMessage) ([]int, error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []float64
	if json.Unmarshal(raw, &list) != nil {
		var one float64
		if json.Unmarshal(raw, &one) != nil {
			return nil, errors.New("want a code or a list of codes (HTTP statuses, JSON-RPC codes)")
		}
		list = []float64{one}
	}
	out := make([]int, 0, len(list))
	for _, f := range list {
		n, ok := whole(f)
		if !ok || n == 0 {
			return nil, errors.New("want whole, non-zero codes")
		}
		out = append(out, n)
	}
	return out, nil
}

// strs reads a string or a list of strings.
func strs(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil, errors.New("want a string or a list of strings")
		}
		list = []string{one}
	}
	if slices.Contains(list, "") {
		return nil, errors.New("an empty string matches every text")
	}
	return list, nil
}

// describe words a decoding error for people: an unknown key by name, a
// value of the wrong type by its key.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	msg := err.Error()
	if field, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + field
	}
	return strings.TrimPrefix(msg, "json: ")
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// Token, not More: More reports nothing after a stray "]" or "}".
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func whole(f float64) (int, bool) {
	if f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, false
	}
	return int(f), true
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

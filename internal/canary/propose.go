// Package canary chooses the canary calls of a server and says which of
// its credentials they watch: the starter contracts file mcpwatch init
// writes for a server from what it lists, and the closing table of init
// (which canary watches each server's credential, or why none can), which
// a mcpwatch doctor can print again from the same inputs.
//
// It proposes; it never calls. What may be called is the contracts
// package's rule (contracts.Needs), and nothing here loosens it: a tool
// that is not annotated read-only is only ever proposed disabled, with
// the opt-ins it would take written beside it.
package canary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Status is what a starter contract does.
type Status string

const (
	// Enabled contracts are called by check and the daemon: read-only
	// tools that need no input and answered their sample call.
	Enabled Status = "enabled"
	// Pending contracts are read-only tools whose required inputs are
	// placeholders: called once they are filled in. Propose writes none
	// (a placeholder it cannot fill is disabled, so that check --strict
	// passes on what init wrote); a person may.
	Pending Status = "pending"
	// Proposed contracts are written disabled: a tool whose name reads as
	// a query but that is not annotated read-only (it takes both opt-ins),
	// or a read-only one whose sample call failed or was too slow.
	Proposed Status = "proposed"
)

// Entry is one starter contract.
type Entry struct {
	Tool   string
	Status Status
	// Comment says what it is and what it takes, for people ($comment).
	Comment string
	// Input is the arguments: {} or required properties as placeholders.
	Input map[string]any
	// AllowSideEffects is the contract's opt-in, written on proposals of
	// tools that are not annotated read-only.
	AllowSideEffects bool
	// Shape is a response-shape assertion recorded from the sample call:
	// the JSON type of the answer's document ("object", "array"); "" when
	// the answer had none.
	Shape string
	// Expect is the contract's expectation as JSON, when it is not the
	// default: the catalogue's, or "credentialAccepted" for a generated
	// input.
	Expect string
	// Catalogue is the ID of the catalogue entry the contract is from.
	Catalogue string
}

// Sample is the one call mcpwatch init makes of a read-only tool that
// needs no input, to learn the shape of its answer.
type Sample struct {
	Outcome contracts.Outcome
}

// MaxSampleTime is the longest a sample call may take for its tool to be
// enabled as a canary: a canary runs at every check and every
// call_schedule, within the server's timeout.
const MaxSampleTime = 5 * time.Second

// Propose is the starter contracts of a server, from the tools it lists,
// in the order it lists them. samples are the calls made of read-only
// tools that need no input, by tool. server names the server, and file
// the contracts file, in the comments that say what to do.
//
// Nothing it writes waits for a person before 'mcpwatch check --strict'
// passes: a read-only tool that needs input gets one generated from its
// schema (GenerateInput), enabled when the server has no other canary
// and disabled beside one; an input that cannot be generated is written
// with placeholders, disabled, for a person to fill in.
func Propose(server, file string, tools []probe.Tool, samples map[string]Sample) []Entry {
	return ProposeVetted(server, file, tools, samples, nil)
}

// ProposeVetted is Propose with the catalogue's canary of the server, when
// it has one (see Vetted): its contract is written enabled, as the entry
// has it, in place of what Propose would write for the tool.
func ProposeVetted(server, file string, tools []probe.Tool, samples map[string]Sample, vetted *CatalogueEntry) []Entry {
	var out []Entry
	prefix := serverPrefix(tools)
	// canary: a call that watches the server already, so that a generated
	// input is only called when nothing else would be.
	canary := vetted != nil
	for _, t := range tools {
		if !canary && !contracts.Needs(t).SideEffects && !contracts.RequiresArguments(t) {
			if e := sampled(t, samples[t.Name]); e.Status == Enabled {
				canary = true
			}
		}
	}
	for _, t := range tools {
		needs := contracts.Needs(t)
		switch {
		case vetted != nil && t.Name == vetted.Tool:
			out = append(out, vettedEntry(t, *vetted))
		case !needs.SideEffects && !contracts.RequiresArguments(t):
			out = append(out, sampled(t, samples[t.Name]))
		case !needs.SideEffects:
			e := generated(t, !canary)
			canary = canary || e.Status == Enabled
			out = append(out, e)
		case readsAsQuery(t.Name, prefix):
			why := needs.Why
			if needs.Destructive {
				why += ", and " + needs.DestructiveWhy
			}
			comment := fmt.Sprintf("Proposed, disabled: a name that reads as a query, but the tool %s. To make it a canary, in one go: check that calling it is harmless, fill in its input, remove \"disabled\", keep \"allowSideEffects\": true", why)
			if needs.Destructive {
				comment += fmt.Sprintf(", and list %s under allow_destructive_calls: of server %s in mcpwatch.yml", t.Name, server)
			}
			comment += ". Its input schema: " + schemaText(t)
			out = append(out, Entry{Tool: t.Name, Status: Proposed, Input: placeholderInput(t), AllowSideEffects: true, Comment: comment})
		}
	}
	return out
}

// vettedEntry is the catalogue's contract for its tool, enabled. A tool
// that is not annotated read-only takes "allowSideEffects": true, written
// here; its destructive opt-in is the catalogue's (Vouches).
func vettedEntry(t probe.Tool, v CatalogueEntry) Entry {
	var in map[string]any
	if json.Unmarshal(v.Input, &in) != nil || in == nil {
		in = map[string]any{}
	}
	e := Entry{Tool: t.Name, Status: Enabled, Input: in, Expect: compactJSON(v.Expect), Catalogue: v.ID,
		AllowSideEffects: contracts.Needs(t).SideEffects}
	e.Comment = fmt.Sprintf("Vetted canary, from mcpwatch's catalogue: entry %s (%s). %s only reads: %s, as %s says; it sees the server's credential.", v.ID, v.Server, v.Tool, v.Reads, v.Source)
	if e.AllowSideEffects {
		e.Comment += " The server does not annotate it readOnlyHint: true, so mcpwatch calls it on the catalogue's word (\"allowSideEffects\": true here; no allow_destructive_calls: needed)."
	}
	if m := v.Metered; m != nil {
		if p := m.pace(v.Tool); p.Never {
			e.Comment += " Metered: " + p.Why + " (\"schedule\": \"@every 24h\", say)."
		} else {
			e.Comment += " Metered: " + p.Why + ", unless this contract names a \"schedule\" of its own."
		}
	}
	e.Comment += " Edit freely: 'mcpwatch init' never changes it again; 'mcpwatch init --no-catalogue' writes none."
	return e
}

// generated is the entry of a read-only tool that needs input: an input
// generated from its schema, whose call can show only that the credential
// is taken ("credentialAccepted"); enabled when the server has no canary
// otherwise, else disabled. A schema no input can be generated from gets
// placeholders, disabled, and says why.
func generated(t probe.Tool, enable bool) Entry {
	in, err := GenerateInput(t.InputSchema)
	if err != nil {
		return Entry{Tool: t.Name, Status: Proposed, Input: placeholderInput(t),
			Comment: fmt.Sprintf("Read-only (readOnlyHint: true), but mcpwatch could not make an input from its schema (%s): fill in the \"<fill in ...>\" values and remove \"disabled\" to call it. Its input schema: %s", cut(err.Error(), 300), schemaText(t))}
	}
	e := Entry{Tool: t.Name, Input: in, Expect: `{"status": "credentialAccepted"}`}
	what := "Read-only (readOnlyHint: true), with an input mcpwatch generated from its schema: the call proves only that the server's credential is accepted (a validation error or a not-found answer passes; a rejected credential, an unreachable service or no answer fails). Give it a real input and \"status\": \"pass\" to check the tool itself. Nobody vetted what its calls cost: the daemon calls it at most once every " + Duration(GeneratedEvery) + " unless it names a \"schedule\" of its own."
	if enable {
		e.Status, e.Comment = Enabled, what
	} else {
		e.Status, e.Comment = Proposed, what+" Disabled: another canary watches this server already; remove \"disabled\" to call it too."
	}
	e.Comment += " Its input schema: " + schemaText(t)
	return e
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// sampled is the entry of a read-only tool that needs no input, from its
// sample call: enabled when the call answered a success in time, else a
// proposal that says what came back.
func sampled(t probe.Tool, s Sample) Entry {
	e := Entry{Tool: t.Name, Input: map[string]any{}}
	o := s.Outcome
	switch {
	case o.Tool == "":
		e.Status, e.Comment = Proposed, "Read-only and needs no input, but mcpwatch init could not call it to record its answer; remove \"disabled\" to call it."
	case !o.Passed:
		e.Status = Proposed
		e.Comment = fmt.Sprintf("Read-only and needs no input, but its call by mcpwatch init failed (%s): %s. Remove \"disabled\" once it answers.", o.Reason, cut(o.Message, 200))
	case o.Duration > MaxSampleTime:
		e.Status = Proposed
		e.Comment = fmt.Sprintf("Read-only and needs no input, but its call by mcpwatch init took %s, too long for a canary called at every check. Remove \"disabled\" to call it anyway.", o.Duration.Round(100*time.Millisecond))
	default:
		e.Status = Enabled
		e.Shape = shapeOf(o)
		e.Comment = "Read-only (readOnlyHint: true) and needs no input: a canary as it is."
		if e.Shape != "" {
			e.Comment += fmt.Sprintf(" Its answer was a JSON %s when mcpwatch init called it; the jsonSchema assertion keeps to that.", e.Shape)
		}
	}
	return e
}

// shapeOf is the JSON type of a passed call's document: structuredContent,
// else the first text block that is JSON.
func shapeOf(o contracts.Outcome) string {
	last := o.Last()
	if last == nil || last.Call == nil {
		return ""
	}
	c := last.Call
	doc := bytes.TrimSpace(c.StructuredContent)
	if len(doc) == 0 {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(c.Content, &blocks)
		for _, b := range blocks {
			if t := strings.TrimSpace(b.Text); b.Type == "text" && json.Valid([]byte(t)) && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
				doc = []byte(t)
				break
			}
		}
	}
	switch {
	case len(doc) == 0:
		return ""
	case doc[0] == '{':
		return "object"
	case doc[0] == '[':
		return "array"
	}
	return ""
}

// placeholderInput is an input with a placeholder for each required
// property: "<fill in: string, the path of the file>".
func placeholderInput(t probe.Tool) map[string]any {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &s)
	in := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		what := "a value"
		if typ, ok := p.Type.(string); ok && typ != "" {
			what = typ
		}
		if d := strings.TrimSpace(p.Description); d != "" {
			what += ", " + strings.TrimSuffix(cut(d, 100), ".")
		}
		in[name] = contracts.PlaceholderPrefix + ": " + what + ">"
	}
	return in
}

// schemaText is a tool's input schema on one line, bounded, for a comment:
// its own members first (type, required, properties), then the others,
// and shared definitions ($defs, definitions) only counted, so that a
// schema that starts with a long $defs (Notion's) still shows the tool's
// own properties within the bound.
func schemaText(t probe.Tool) string {
	var b bytes.Buffer
	if len(t.InputSchema) == 0 || json.Compact(&b, t.InputSchema) != nil {
		return "(none)"
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(b.Bytes(), &members) != nil {
		return cut(b.String(), 600)
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		switch k {
		case "type":
			return 0
		case "required":
			return 1
		case "properties":
			return 2
		}
		return 3
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	var parts []string
	defs := 0
	for _, k := range keys {
		switch k {
		case "$defs", "definitions":
			var d map[string]json.RawMessage
			_ = json.Unmarshal(members[k], &d)
			defs += len(d)
			continue
		case "$schema":
			continue
		}
		parts = append(parts, quote(k)+":"+string(members[k]))
	}
	suffix := ""
	if defs > 0 {
		suffix = fmt.Sprintf(" (and %d shared definitions in $defs, not shown)", defs)
	}
	return cut("{"+strings.Join(parts, ",")+"}", 600-len(suffix)) + suffix
}

// queryWords are the first words of a tool name that read as a query: a
// tool named so is likely to read, though only its annotations could say.
var queryWords = []string{"list", "get", "search", "read", "query", "find", "fetch", "describe", "show", "lookup", "view", "count"}

// writeWords are words that make a name read as a write wherever they are
// ("web_search" reads as a query, "delete_search" does not).
var writeWords = []string{"create", "update", "delete", "remove", "add", "set", "write", "post", "send", "push", "merge",
	"put", "edit", "move", "insert", "drop", "reset", "toggle", "trigger", "run", "execute", "reply", "fork", "upload"}

// ReadsAsQuery reports whether a tool's name reads as a query: it starts
// with a query word (list_issues, getUser, search-code), or ends with
// "search" or "query" and holds no word of a write (web_search).
func ReadsAsQuery(name string) bool {
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	if slices.Contains(queryWords, words[0]) {
		return true
	}
	if last := words[len(words)-1]; last != "search" && last != "query" {
		return false
	}
	return !slices.ContainsFunc(words, func(w string) bool { return slices.Contains(writeWords, w) })
}

// serverPrefix is the first word every tool of a server's name starts
// with, when there are several tools and they share one ("slack" of
// slack_list_channels and slack_post_message): a name's own words come
// after it.
func serverPrefix(tools []probe.Tool) string {
	if len(tools) < 2 {
		return ""
	}
	first := splitWords(tools[0].Name)
	if len(first) < 2 {
		return ""
	}
	for _, t := range tools[1:] {
		if w := splitWords(t.Name); len(w) < 2 || w[0] != first[0] {
			return ""
		}
	}
	return first[0]
}

// readsAsQuery is ReadsAsQuery of a tool's name with its server's prefix
// taken off.
func readsAsQuery(name, prefix string) bool {
	words := splitWords(name)
	if prefix != "" && len(words) > 1 && words[0] == prefix {
		return ReadsAsQuery(strings.Join(words[1:], "_"))
	}
	return ReadsAsQuery(name)
}

// splitWords splits a name into lower-case words at underscores, dashes,
// dots, spaces and lower-to-upper case changes.
func splitWords(name string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		b.WriteRune(unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// File renders entries as a contracts file: mcp-probe's sidecar format,
// with mcpwatch's own keys ("disabled", "$comment"); members in a stable
// order, so the same servers give the same file.
func File(comment string, entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"$comment\": %s,\n", quote(comment))
	b.WriteString("  \"tools\": {")
	for i, e := range entries {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.WriteString(member(e))
	}
	if len(entries) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// member is one entry as a member of the "tools" object, indented to sit
// four spaces in.
func member(e Entry) string { return quote(e.Tool) + ": " + value(e) }

// value is the contract of an entry, as member writes it.
func value(e Entry) string {
	var b strings.Builder
	b.WriteString("{\n")
	fmt.Fprintf(&b, "      \"$comment\": %s,\n", quote(e.Comment))
	if e.Status == Proposed {
		b.WriteString("      \"disabled\": true,\n")
	}
	if e.AllowSideEffects {
		b.WriteString("      \"allowSideEffects\": true,\n")
	}
	fmt.Fprintf(&b, "      \"input\": %s,\n", object(e.Input))
	expect := `{"status": "pass", "not_error_code": [401, 403]`
	if e.Shape != "" {
		expect += fmt.Sprintf(`, "jsonSchema": {"type": %q}`, e.Shape)
	}
	expect += "}"
	if e.Expect != "" {
		expect = e.Expect
	}
	fmt.Fprintf(&b, "      \"expect\": %s\n    }", expect)
	return b.String()
}

// quote is s as a JSON string, with <, > and & as they are: the file is
// read by people, not embedded in HTML.
func quote(s string) string { return marshal(s) }

func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// object writes a flat input object with its keys sorted.
func object(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = quote(k) + ": " + marshal(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// cut puts s on one line, at most n bytes (sanitize.Line).
func cut(s string, n int) string { return sanitize.Line(s, n) }

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// callFlags are mcpwatch probe's --call and its opt-ins: one tools/call by
// hand, in the session that listed the tools, to try a canary before
// writing its contract.
type callFlags struct {
	tool             string
	input            string
	allowSideEffects bool
	allowDestructive bool
}

func (c *callFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.tool, "call", "", "after listing, call the `TOOL` once in the same session and print its result (read-only tools only, unless allowed below)")
	fs.StringVar(&c.input, "input", "", "arguments of --call, a JSON `object` (default {})")
	fs.BoolVar(&c.allowSideEffects, "allow-side-effects", false, "let --call call a tool that is not annotated readOnlyHint: true")
	fs.BoolVar(&c.allowDestructive, "allow-destructive", false, "let --call call a tool that may be destructive (no destructiveHint: false); needs --allow-side-effects too")
}

// check validates the flags: an opt-in or input without --call, an input
// that is not a JSON object.
func (c *callFlags) check(fs *pflag.FlagSet) error {
	if c.tool == "" {
		for _, name := range []string{"input", "allow-side-effects", "allow-destructive"} {
			if fs.Changed(name) {
				return usagef("--%s applies to --call only", name)
			}
		}
		return nil
	}
	if c.input == "" {
		c.input = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.input), &obj); err != nil || obj == nil {
		return usagef("--input: want a JSON object of the tool's arguments, such as '{\"message\": \"hi\"}'")
	}
	return nil
}

// callOutcome is what --call did: called, or refused and why.
type callOutcome struct {
	tool    string
	input   json.RawMessage
	refused string // why it was not called; "" when it was
	result  *probe.CallResult
}

// hook is the probe's AfterList hook: it finds the tool, applies the one
// rule of what may be called (contracts.Needs) to the flags, and calls it
// or says what it would take.
func (c *callFlags) hook(out *callOutcome) probe.AfterList {
	*out = callOutcome{tool: c.tool, input: json.RawMessage(c.input)}
	return func(ctx context.Context, tools []probe.Tool, caller probe.Caller) {
		i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == c.tool })
		if i < 0 {
			out.refused = fmt.Sprintf("the server lists no tool %s (see the tools above)", c.tool)
			return
		}
		if why := c.refusal(contracts.Needs(tools[i])); why != "" {
			out.refused = why
			return
		}
		out.result = caller.Call(ctx, c.tool, out.input)
	}
}

// refusal names every opt-in a call still lacks, in one message; "" when
// the flags give all it needs.
func (c *callFlags) refusal(n contracts.OptIns) string {
	var why, flags []string
	if n.SideEffects && !c.allowSideEffects {
		why, flags = append(why, n.Why), append(flags, "--allow-side-effects")
	}
	if n.Destructive && !c.allowDestructive {
		why, flags = append(why, n.DestructiveWhy), append(flags, "--allow-destructive")
	}
	if len(flags) == 0 {
		return ""
	}
	return fmt.Sprintf("tool %s %s; mcpwatch calls only read-only tools unless told otherwise: if calling it is harmless, add %s",
		c.tool, strings.Join(why, ", and "), strings.Join(flags, " "))
}

// ok reports whether the call was made and answered without isError.
func (o *callOutcome) ok() bool {
	return o.result != nil && o.result.Answered && !o.result.IsError
}

// print writes the call for people, after the probe's own output.
func (o *callOutcome) print(w io.Writer) {
	head := fmt.Sprintf("call %s %s", sanitize.Text(o.tool), sanitize.Text(string(o.input)))
	r := o.result
	switch {
	case o.refused != "":
		fmt.Fprintf(w, "%s: NOT CALLED\n  %s\n", head, sanitize.Text(o.refused))
		return
	case r == nil:
		fmt.Fprintf(w, "%s: NOT CALLED\n  the probe failed before the tools were listed\n", head)
		return
	case !r.Answered:
		fmt.Fprintf(w, "%s: FAILED (%s) in %s\n  error      %s\n", head, r.Reason, r.Duration.Round(100_000), sanitize.Text(r.Error))
		return
	case r.IsError:
		fmt.Fprintf(w, "%s: isError (the tool reported a failure) in %s\n", head, r.Duration.Round(100_000))
	default:
		fmt.Fprintf(w, "%s: ok in %s\n", head, r.Duration.Round(100_000))
	}
	if text := r.Text(); text != "" {
		fmt.Fprintln(w, "text:")
		for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", sanitize.Text(line))
		}
	}
	if len(r.StructuredContent) > 0 {
		fmt.Fprintf(w, "structured:\n  %s\n", sanitize.Text(compactJSON(r.StructuredContent)))
	}
	if len(r.Content) > 0 {
		fmt.Fprintf(w, "content:\n  %s\n", sanitize.Text(compactJSON(r.Content)))
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// callJSON is the call in --format json: the "call" member of the probe's
// object, durations in seconds as everywhere else.
type callJSON struct {
	Tool              string          `json:"tool"`
	Input             json.RawMessage `json:"input"`
	Called            bool            `json:"called"`
	Refused           string          `json:"refused,omitempty"`
	OK                bool            `json:"ok"`
	Answered          bool            `json:"answered"`
	Reason            probe.Reason    `json:"reason,omitempty"`
	Error             string          `json:"error,omitempty"`
	HTTPStatus        int             `json:"http_status,omitempty"`
	RPCCode           int             `json:"rpc_code,omitempty"`
	RPCMessage        string          `json:"rpc_message,omitempty"`
	IsError           bool            `json:"is_error,omitempty"`
	Text              string          `json:"text,omitempty"`
	Content           json.RawMessage `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	Duration          float64         `json:"duration_seconds"`
}

func (o *callOutcome) json() callJSON {
	j := callJSON{Tool: o.tool, Input: o.input, Refused: o.refused, OK: o.ok()}
	if r := o.result; r != nil {
		j.Called, j.Answered, j.Reason, j.Error = true, r.Answered, r.Reason, r.Error
		j.HTTPStatus, j.RPCCode, j.RPCMessage, j.IsError = r.HTTPStatus, r.RPCCode, r.RPCMessage, r.IsError
		j.Text, j.Content, j.StructuredContent, j.Duration = r.Text(), r.Content, r.StructuredContent, r.Duration.Seconds()
	} else if o.refused == "" {
		j.Refused = "the probe failed before the tools were listed"
	}
	return j
}

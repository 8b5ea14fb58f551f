package peertest

import (
	"context"
	"encoding/json"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Call probes target and, once it has listed its tools, calls tool with
// arguments (a JSON object) in the same session: what a canary call of the
// daemon does. The call is nil when the probe failed before listing.
func Call(ctx context.Context, target probe.Target, tool string, arguments string) (*probe.Result, *probe.CallResult) {
	var call *probe.CallResult
	res := probe.Run(ctx, target, probe.Options{AfterList: func(ctx context.Context, _ []probe.Tool, c probe.Caller) {
		call = c.Call(ctx, tool, json.RawMessage(arguments))
	}})
	return res, call
}

package probe_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// opsOf is each operation as "method reason", with the tool of a
// tools/call and "tool_error" for an isError result.
func opsOf(r *probe.Result) []string {
	out := make([]string, len(r.Operations))
	for i, op := range r.Operations {
		s := op.Method
		if op.Tool != "" {
			s += " " + op.Tool
		}
		if op.Error != "" {
			s += " " + string(op.Error)
		}
		if op.ToolError {
			s += " tool_error"
		}
		if op.Duration <= 0 {
			s += " (no duration)"
		}
		out[i] = s
	}
	return out
}

// A probe keeps every request it made, in order, with its duration and
// outcome: detection's server/discover (refused by a legacy server),
// initialize, each tools/list page, a canary tools/call; a request that
// failed carries the probe's reason for it.
func TestOperations(t *testing.T) {
	call := func(ctx context.Context, _ []probe.Tool, c probe.Caller) {
		c.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
	}
	echo := []probetest.Tool{probetest.EchoTool()}
	tests := []struct {
		name string
		cfg  probetest.Config
		hint probe.Era
		opts probe.Options
		want []string
	}{
		{name: "legacy, detected", cfg: probetest.Config{Era: probetest.EraLegacy},
			want: []string{"server/discover rpc_error", "initialize", "tools/list"}},
		{name: "modern, detected", cfg: probetest.Config{Era: probetest.EraModern},
			want: []string{"server/discover", "tools/list"}},
		{name: "modern, era remembered", cfg: probetest.Config{Era: probetest.EraModern}, hint: probe.EraModern,
			want: []string{"tools/list"}},
		{name: "pages", cfg: probetest.Config{Era: probetest.EraModern, Behavior: probetest.ManyTools}, hint: probe.EraModern,
			want: slices.Repeat([]string{"tools/list"}, probetest.ManyToolsCount/probetest.ManyToolsPageSize)},
		{name: "401", cfg: probetest.Config{Behavior: probetest.Unauthorized401},
			want: []string{"server/discover unauthorized"}},
		{name: "a canary call", cfg: probetest.Config{Era: probetest.EraModern, Tools: echo}, hint: probe.EraModern,
			opts: probe.Options{AfterList: call}, want: []string{"tools/list", "tools/call echo"}},
		{name: "a call answered isError", cfg: probetest.Config{Era: probetest.EraModern, Tools: echo, Behavior: probetest.CallIsError}, hint: probe.EraModern,
			opts: probe.Options{AfterList: call}, want: []string{"tools/list", "tools/call echo tool_error"}},
		{name: "a call refused", cfg: probetest.Config{Era: probetest.EraModern, Tools: echo, Behavior: probetest.CallRPCError}, hint: probe.EraModern,
			opts: probe.Options{AfterList: call}, want: []string{"tools/list", "tools/call echo rpc_error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, url := kitServer(t, tc.cfg, false)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			r := probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP, EraHint: tc.hint}, tc.opts)
			if got := opsOf(r); !slices.Equal(got, tc.want) {
				t.Errorf("operations %q, want %q (probe: ok %t %s %s)", got, tc.want, r.OK, r.Reason, r.Error)
			}
		})
	}
}

// A request cut by the deadline is kept, with reason timeout.
func TestOperationsTimeout(t *testing.T) {
	_, url := kitServer(t, probetest.Config{Era: probetest.EraModern, Behavior: probetest.StallToolsList}, false)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	r := probe.Run(ctx, probe.Target{URL: url, Transport: probe.TransportHTTP, EraHint: probe.EraModern}, probe.Options{})
	if got := opsOf(r); !slices.Equal(got, []string{"tools/list timeout"}) {
		t.Errorf("operations %q, want one tools/list that timed out", got)
	}
}
